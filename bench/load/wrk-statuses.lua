-- What the benchmark's wrk scripts share (wrk-requests.lua, wrk-auth.lua, and the one
-- bench/scim.mjs writes): each thread counts its answers by status in the global `statuses`,
-- and report_statuses(threads) prints one line, "wrk-statuses {json}", with the counts of all
-- threads, which bench/load/wrk.mjs reads. A script loads this file with dofile().

statuses = {}

function count_status(status)
  statuses[status] = (statuses[status] or 0) + 1
end

function report_statuses(threads)
  local total = {}
  for _, thread in ipairs(threads) do
    for status, n in pairs(thread:get("statuses")) do
      total[status] = (total[status] or 0) + n
    end
  end
  local parts = {}
  for status, n in pairs(total) do
    table.insert(parts, string.format('"%d":%d', status, n))
  end
  io.write("wrk-statuses {" .. table.concat(parts, ",") .. "}\n")
end
