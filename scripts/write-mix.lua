-- write-mix.lua: members writing the ways a site's members do, at once (issue 63 #5,
-- scripts/bench-write-mix.sh): of every 12 requests, 3 posts on their own city's board, 3
-- agreements with another member's post, 2 bookmarks added and 2 taken away, 1 list of
-- notices opened (which marks them read) and 1 sign-in with a password.
--
--   SESSIONS=sessions.tsv SLUGS=slugs.txt POSTS=posts.txt wrk -t1 -c32 -d10s --latency -s write-mix.lua URL
--
-- SESSIONS: line N is "cookie-header<TAB>username<TAB>password" of member N; SLUGS:
-- line N is member N's city; POSTS: post ids to agree with (not member N's own: each member
-- agrees with the post of the member after them).

local sessions, slugs, posts = {}, {}, {}
local sent = 0
local run = tostring(os.time())
local kinds = { "post", "agree", "bookmark", "post", "agree", "unbookmark", "post", "agree", "bookmark", "notices", "unbookmark", "signin" }

function init(args)
  for line in io.lines(os.getenv("SESSIONS")) do
    local cookie, username, password = line:match("^(.-)\t(.-)\t(.+)$")
    if cookie then table.insert(sessions, { cookie = cookie, username = username, password = password }) end
  end
  for line in io.lines(os.getenv("SLUGS")) do table.insert(slugs, line) end
  for line in io.lines(os.getenv("POSTS")) do table.insert(posts, line) end
end

local function form(path, who, body)
  return wrk.format("POST", path, { ["Content-Type"] = "application/x-www-form-urlencoded", ["Cookie"] = who.cookie,
    ["Sec-Fetch-Site"] = "same-origin" }, body)
end

function request()
  sent = sent + 1
  local member = (sent % #sessions) + 1
  local who = sessions[member]
  local kind = kinds[(math.floor(sent / #sessions) + member) % #kinds + 1]
  local other = slugs[(member % #slugs) + 1]
  if kind == "post" then
    return form("/city/" .. slugs[member] .. "/posts", who, "body=Run+" .. run .. "+post+" .. sent .. "+by+member+" .. member)
  elseif kind == "agree" then
    return form("/posts/" .. posts[(member % #posts) + 1] .. "/react", who, "return_to=%2F")
  elseif kind == "bookmark" then
    return form("/bookmarks/" .. other, who, "")
  elseif kind == "unbookmark" then
    return form("/bookmarks/" .. other .. "/delete", who, "")
  elseif kind == "notices" then
    return wrk.format("GET", "/notifications", { ["Cookie"] = who.cookie, ["Sec-Fetch-Site"] = "same-origin" })
  else
    return wrk.format("POST", "/login", { ["Content-Type"] = "application/x-www-form-urlencoded", ["Sec-Fetch-Site"] = "same-origin" },
      "username=" .. who.username .. "&password=" .. who.password)
  end
end
