-- One wrk script for every scenario: the requests come from a file the bench suite writes.
--
--   wrk ... -s bench/wrk/requests.lua URL -- <file> <mode> <threads> [count]
--
-- <file>: one request per line, "METHOD<TAB>PATH<TAB>API-KEY<TAB>BODY" (key and body may be
-- empty). Every line is rendered once, in init(), so request() costs wrk nothing.
-- <mode>:
--   random  a random line for every request (GET booking, baseline reads)
--   cycle   the lines in turn, each thread from its own offset (create: (key, search_id) pairs)
--   once    each line at most once, the lines dealt out between threads (cancel: one booking per
--           request); a thread that runs out stops (wrk.thread:stop()) and counts "exhausted".
--           wrk still waits out -d, so its req/s is meaningless then: the suite uses Little's law
--           (connections / mean latency) for such runs.
-- <threads>: the -t value (to deal lines out in "once" mode).
-- "count" as the 4th argument counts answers by status class (2xx/4xx/5xx) in response().
--
-- done() prints one line "BENCHJSON {...}" that bench/wrkrun.py parses.

local threads = {}
local counter = 0

function setup(thread)
  thread:set("tid", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

local function split(line)
  local fields = {}
  for field in (line .. "\t"):gmatch("([^\t]*)\t") do
    table.insert(fields, field)
  end
  return fields
end

local rendered = {}
local mode = "random"
local position = 1
exhausted = 0
s2xx, s3xx, s4xx, s5xx = 0, 0, 0, 0

function init(args)
  local file, nthreads = args[1], tonumber(args[3] or "1")
  mode = args[2] or "random"
  local all = {}
  for line in io.lines(file) do
    if #line > 0 then
      local f = split(line)
      local headers = {}
      if f[3] ~= nil and #f[3] > 0 then headers["Authorization"] = "Bearer " .. f[3] end
      local body = nil
      if f[4] ~= nil and #f[4] > 0 then
        body = f[4]
        headers["Content-Type"] = "application/json"
      end
      table.insert(all, wrk.format(f[1], f[2], headers, body))
    end
  end
  if mode == "once" then
    for i, req in ipairs(all) do
      if (i - 1) % nthreads == tid then table.insert(rendered, req) end
    end
  else
    rendered = all
  end
  math.randomseed(os.time() * 1000 + tid)
  if mode == "cycle" then position = (tid * 7919) % #rendered + 1 end  -- "once": every line, from the first
  if args[4] == "count" then
    response = function(status, headers, body)
      if status >= 500 then s5xx = s5xx + 1
      elseif status >= 400 then s4xx = s4xx + 1
      elseif status >= 300 then s3xx = s3xx + 1
      else s2xx = s2xx + 1 end
    end
  end
end

function request()
  if mode == "random" then
    return rendered[math.random(#rendered)]
  end
  local req = rendered[position]
  if mode == "once" then
    if position < #rendered then
      position = position + 1
    else
      exhausted = exhausted + 1
      wrk.thread:stop()
    end
  else
    position = position % #rendered + 1
  end
  return req
end

function done(summary, latency, requests)
  local e = summary.errors
  local sum = {s2xx = 0, s3xx = 0, s4xx = 0, s5xx = 0, exhausted = 0}
  for _, t in ipairs(threads) do
    for k, _ in pairs(sum) do sum[k] = sum[k] + (tonumber(t:get(k)) or 0) end
  end
  io.write(string.format(
    'BENCHJSON {"requests":%d,"duration_us":%d,"connect_errors":%d,"read_errors":%d,"write_errors":%d,' ..
    '"status_errors":%d,"timeouts":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,"mean_us":%.1f,' ..
    '"s2xx":%d,"s3xx":%d,"s4xx":%d,"s5xx":%d,"exhausted":%d}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean,
    sum.s2xx, sum.s3xx, sum.s4xx, sum.s5xx, sum.exhausted))
end
