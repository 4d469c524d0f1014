-- wrk script: one push.sent event per POST /v1/events (the fleet's APNs results, one at a time).
-- Arguments after `--`: <run prefix> <activity prefix> <activities> <base unix time> [close].
-- With "close", every request carries `Connection: close` (a new connection per request, as a
-- backend that opens one per push does).
-- Every request has a new event id, so every one is stored (no duplicates).
local threads = {}

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  run = args[1] or "w"
  activityPrefix = args[2] or "a"
  activities = tonumber(args[3] or "1000")
  base = tonumber(args[4] or "1800000000")
  counter = 0
  headers = { ["Content-Type"] = "application/json" }
  if args[5] == "close" then headers["Connection"] = "close" end
end

function request()
  counter = counter + 1
  local a = (counter * 7919 + tid * 104729) % activities
  local t = base + counter * 0.0001
  local body = string.format(
    '{"id":"%s-%d-%d","type":"push.sent","activity_id":"%s%d","occurred_at":%.4f,' ..
    '"event":"update","priority":%d,"status":200,"latency_ms":%.1f,"push_token":"%064x",' ..
    '"timestamp":%.4f,"payload_bytes":212,"apns_id":"0e8b5a3c-6f0d-4d7e-9a51-%012d",' ..
    '"content_state":{"driverName":"Ana","rating":"4.9","progress":%.2f,"duration":%d}}',
    run, tid, counter, activityPrefix, a, t, (counter % 4 == 0) and 5 or 10, 20 + counter % 60,
    a + 1, t, counter, (counter % 100) / 100, counter % 30)
  return wrk.format("POST", "/v1/events", headers, body)
end
