-- wrk script of `npm run bench -- --auth` (bench/auth.mjs): GET /users/:id with a bearer token.
--
--   wrk ... -s wrk-auth.lua URL -- USERS SEED THREADS [TOKENS_FILE]
--
-- TOKENS_FILE holds one token per line, as many as connections (none: no Authorization header).
-- Each thread takes its share and hands them out in turn, so every connection's requests carry
-- a token of their own and the service sees as many distinct callers as connections. done()
-- prints one line, "wrk-statuses {json}", with the status counts of all threads.

dofile((string.match(debug.getinfo(1, "S").source, "^@(.*/)") or "") .. "wrk-statuses.lua")

local threads = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

local users, thread_count
local tokens = {}
local next_token = 0

function init(args)
  users = tonumber(args[1])
  math.randomseed(tonumber(args[2]) + id)
  thread_count = tonumber(args[3])
  local file = args[4] and io.open(args[4], "r")
  if file then
    local index = 0
    for line in file:lines() do
      index = index + 1
      -- Thread k of n takes tokens k, k+n, k+2n...: disjoint shares.
      if line ~= "" and (index - id) % thread_count == 0 then
        table.insert(tokens, "Bearer " .. line)
      end
    end
    file:close()
  end
end

function request()
  local path = "/users/" .. math.random(1, users)
  if #tokens == 0 then
    return wrk.format("GET", path)
  end
  next_token = next_token % #tokens + 1
  return wrk.format("GET", path, { Authorization = tokens[next_token] })
end

function response(status)
  count_status(status)
end

function done()
  report_statuses(threads)
end
