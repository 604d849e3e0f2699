-- city-mix-zipf.lua: wrk script for real traffic on city pages: slugs drawn from a Zipf
-- distribution (s = 1) over a list of cities (the most visited first), gzip asked on every
-- request as browsers do, and a share of requests signed in with a pool of members' sessions.
--
--   SLUGS=/tmp/slugs.txt SESSIONS=/tmp/sessions.tsv SIGNED_IN_PCT=20 \
--     wrk -t1 -c64 -d30s --latency -s scripts/city-mix-zipf.lua http://127.0.0.1:8080
--
-- SLUGS: one slug per line, most visited first (scripts/bench-pages.sh writes the 2,000 largest
-- cities). SESSIONS: a cookie header per line (more fields after a tab are ignored). FETCH_METADATA=0
-- leaves out `Sec-Fetch-Site`, as older browsers and scripts do. PATH_PREFIX
-- ("/city/" by default) lets the same script drive the peer. wrk's LuaJIT has no `//`:
-- integer division is math.floor(a / b).

local slugs = {}
local cumulative = {}
local sessions = {}
local signed_in_pct = tonumber(os.getenv("SIGNED_IN_PCT") or "20")
local prefix = os.getenv("PATH_PREFIX") or "/city/"
local exponent = tonumber(os.getenv("ZIPF_S") or "1")
local fetch_metadata = os.getenv("FETCH_METADATA") ~= "0"

function init(args)
  math.randomseed(os.time() + math.floor(os.clock() * 1000000))
  for line in io.lines(os.getenv("SLUGS")) do
    if line ~= "" then table.insert(slugs, line) end
  end
  -- The Zipf weights 1/k^s, summed once: a draw is a binary search in the running sums.
  local total = 0
  for k = 1, #slugs do
    total = total + 1 / (k ^ exponent)
    cumulative[k] = total
  end
  for k = 1, #slugs do cumulative[k] = cumulative[k] / total end
  local file = os.getenv("SESSIONS")
  if file and file ~= "" then
    for line in io.lines(file) do
      local cookie = line:match("^([^\t]+)")
      if cookie then table.insert(sessions, cookie) end
    end
  end
end

local function draw()
  local r = math.random()
  local low, high = 1, #cumulative
  while low < high do
    local middle = math.floor((low + high) / 2)
    if cumulative[middle] < r then low = middle + 1 else high = middle end
  end
  return slugs[low]
end

function request()
  -- A browser's request: a current one says where it comes from.
  local headers = { ["Accept-Encoding"] = "gzip" }
  if fetch_metadata then headers["Sec-Fetch-Site"] = "same-origin" end
  if #sessions > 0 and math.random(100) <= signed_in_pct then
    headers["Cookie"] = sessions[math.random(#sessions)]
  end
  return wrk.format("GET", prefix .. draw(), headers)
end

function done(summary, latency, requests)
  io.write(string.format("non-2xx-3xx %d\n", summary.errors.status))
end
