-- wrk script of the benchmark (bench/load/wrk.mjs): builds each endpoint's requests, counts the
-- answers by status and stops each thread after its share of the run's request budget.
--
--   wrk ... -s wrk-requests.lua URL -- KEY USERS SEED MAX_PER_THREAD RUN_TAG ROLES POST_ROLE
--
-- KEY is health, user, user304, list, posts, patch (also `npm run bench -- --feed`), create or createKeyed; ROLES a comma-separated list for the list query.
-- done() prints one line, "wrk-statuses {json}", with the status counts of all threads.

dofile((string.match(debug.getinfo(1, "S").source, "^@(.*/)") or "") .. "wrk-statuses.lua")

local threads = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

local key, users, max_answers, tag, post_role
local roles = {}
local created = 0
local patched = 0
local answered = 0

function init(args)
  key = args[1]
  users = tonumber(args[2])
  -- Each thread its own sequence, the same on every run.
  math.randomseed(tonumber(args[3]) + id)
  max_answers = tonumber(args[4])
  tag = args[5] .. "-" .. id
  for role in string.gmatch(args[6], "[^,]+") do
    table.insert(roles, role)
  end
  post_role = args[7]
end

local json_headers = { ["Content-Type"] = "application/json" }

function request()
  if key == "user" then
    return wrk.format("GET", "/users/" .. math.random(1, users))
  elseif key == "list" then
    return wrk.format("GET", "/users?role=" .. roles[math.random(1, #roles)] .. "&sort=-createdAt&limit=20")
  elseif key == "posts" then
    return wrk.format("GET", "/users/" .. math.random(1, users) .. "/posts")
  elseif key == "user304" then
    -- Revalidation that matches: seeded users are at version 1, so their ETag is "<id>.1".
    local id = math.random(1, users)
    return wrk.format("GET", "/users/" .. id, { ["If-None-Match"] = '"' .. id .. '.1"' })
  elseif key == "patch" then
    -- An unconditional rename of a seeded user.
    patched = patched + 1
    local body = string.format('{"name":"Bench Patch %s-%d"}', tag, patched)
    return wrk.format("PATCH", "/users/" .. math.random(1, users), json_headers, body)
  elseif key == "create" or key == "createKeyed" then
    -- A unique email per request (no 409s), and a role the list endpoint never asks for.
    created = created + 1
    local body = string.format(
      '{"name":"Bench User %d","email":"bench-%s-%d@example.com","role":"%s"}',
      created, tag, created, post_role)
    local headers = json_headers
    if key == "createKeyed" then
      headers = { ["Content-Type"] = "application/json",
                  ["Idempotency-Key"] = string.format("bench-%s-%d", tag, created) }
    end
    return wrk.format("POST", "/users", headers, body)
  end
  return wrk.format("GET", "/health")
end

function response(status, headers, body)
  count_status(status)
  answered = answered + 1
  if answered >= max_answers then
    wrk.thread:stop()
  end
end

function done(summary, latency, requests)
  report_statuses(threads)
end
