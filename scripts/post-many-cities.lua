-- post-many-cities.lua: members posting at once, each on a city board of their own (issue 46 #3,
-- scripts/bench-writes.sh).
--
--   SESSIONS=sessions.tsv SLUGS=slugs.txt wrk -t1 -c32 -d10s --latency -s post-many-cities.lua URL
--
-- SESSIONS: line N is the cookie header of member N; SLUGS: line N is the city member
-- N posts on. Requests go to the members in turn, so the connections' requests in flight are
-- different members' on different boards. Every text is new (the board refuses one twice).

local sessions, slugs = {}, {}
local sent = 0
-- Distinguishes this run's texts from an earlier run's on the same database.
local run = tostring(os.time())

function init(args)
  for line in io.lines(os.getenv("SESSIONS")) do
    local cookie = line:match("^([^\t]+)")
    if cookie then table.insert(sessions, { cookie = cookie }) end
  end
  for line in io.lines(os.getenv("SLUGS")) do table.insert(slugs, line) end
end

function request()
  sent = sent + 1
  local member = (sent % #sessions) + 1
  local who = sessions[member]
  local body = "body=Run+" .. run .. "+post+" .. sent .. "+by+member+" .. member .. ":+drizzle+then+sun"
  return wrk.format("POST", "/city/" .. slugs[member] .. "/posts",
    { ["Content-Type"] = "application/x-www-form-urlencoded", ["Cookie"] = who.cookie, ["Sec-Fetch-Site"] = "same-origin" }, body)
end
