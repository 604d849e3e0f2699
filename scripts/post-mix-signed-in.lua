-- post-mix-signed-in.lua: wrk script for a GET/POST mix on one city board of Weatherboard,
-- like the peer's post-mix.lua, but each POST is made by a signed-in person with the session
-- cookie, from a browser that says where the form comes from (Sec-Fetch-Site, from the command line).
--
--   SESSIONS=/tmp/sessions.tsv SLUG=seoul POST_PCT=10 wrk -t1 -c64 -d10s --latency -s post-mix-signed-in.lua URL
--
-- SESSIONS holds one cookie header line per person (scripts/bench-pages.sh makes
-- it). GETs are anonymous, as most readers are. Every POST body is different (the board refuses
-- the same text twice from one person).

local slug = os.getenv("SLUG") or "seoul"
local post_pct = tonumber(os.getenv("POST_PCT") or "10")
local sessions = {}
local threads = {}
counter = 0
posts = 0
local get_req
-- Distinguishes this run's texts from an earlier run's (the warm-up posts the same sequence).
local run = tostring(os.time())

local words = { "rain", "sunny", "coffee", "market", "bus", "late", "river", "park", "museum",
  "tonight", "concert", "traffic", "bridge", "snow", "umbrella", "lunch", "noodles", "street",
  "<b>", "&", "\"quoted\"", "it's", "ferry", "harbour", "sunset", "weekend" }

local function urlencode(s)
  return (s:gsub("[^%w%-%._~ ]", function(c) return string.format("%%%02X", string.byte(c)) end):gsub(" ", "+"))
end

function setup(thread)
  table.insert(threads, thread)
  thread:set("id", #threads)
end

function init(args)
  get_req = wrk.format("GET", "/city/" .. slug)
  for line in io.lines(os.getenv("SESSIONS")) do
    local cookie = line:match("^([^\t]+)")
    if cookie then table.insert(sessions, { cookie = cookie }) end
  end
end

function request()
  counter = counter + 1
  if math.floor(counter * post_pct / 100) > math.floor((counter - 1) * post_pct / 100) then
    posts = posts + 1
    local who = sessions[(posts % #sessions) + 1]
    local target = 40 + ((posts * 37) % 161)
    local parts = { "wrk " .. run .. "-" .. tostring(id) .. "-" .. posts }
    local len, k = #parts[1], posts
    while len < target do
      k = (k * 1103515245 + 12345) % 2147483648
      local w = words[(k % #words) + 1]
      table.insert(parts, w)
      len = len + 1 + #w
    end
    local body = "body=" .. urlencode(table.concat(parts, " "):sub(1, target))
    return wrk.format("POST", "/city/" .. slug .. "/posts",
      { ["Content-Type"] = "application/x-www-form-urlencoded", ["Cookie"] = who.cookie, ["Sec-Fetch-Site"] = "same-origin" }, body)
  end
  return get_req
end

function response(status, headers, body)
  if status >= 400 then
    failures = (failures or 0) + 1
  end
end

function done(summary, latency, requests)
  local total, total_posts, total_failures = 0, 0, 0
  for _, t in ipairs(threads) do
    total = total + (t:get("counter") or 0)
    total_posts = total_posts + (t:get("posts") or 0)
    total_failures = total_failures + (t:get("failures") or 0)
  end
  io.write(string.format("mix: %d requests issued, %d POST (%.1f%%), %d answers >= 400, slug=%s\n",
    total, total_posts, total > 0 and 100 * total_posts / total or 0, total_failures, slug))
end
