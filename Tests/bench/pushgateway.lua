-- wrk script: each APNs push result pushed to Prometheus Pushgateway, as a team would without
-- us: POST /metrics/job/apns_push/activity_id/<id> with the result as gauges (text format).
-- A group per activity keeps each activity's last result (a POST replaces same-named metrics).
-- Arguments after `--`: <activity prefix> <activities>.
local threads = {}

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  activityPrefix = args[1] or "a"
  activities = tonumber(args[2] or "1000")
  counter = 0
  headers = { ["Content-Type"] = "text/plain; version=0.0.4" }
end

function request()
  counter = counter + 1
  local a = (counter * 7919 + tid * 104729) % activities
  local priority = (counter % 4 == 0) and 5 or 10
  local body = string.format(
    '# TYPE apns_push_latency_seconds gauge\n' ..
    'apns_push_latency_seconds{event="update",priority="%d",status="200"} %.4f\n' ..
    '# TYPE apns_push_status gauge\n' ..
    'apns_push_status{event="update",priority="%d"} 200\n' ..
    '# TYPE apns_push_payload_bytes gauge\n' ..
    'apns_push_payload_bytes{event="update"} 212\n' ..
    '# TYPE apns_push_timestamp_seconds gauge\n' ..
    'apns_push_timestamp_seconds %d\n',
    priority, (20 + counter % 60) / 1000, priority, 1800000000 + counter)
  return wrk.format("POST", "/metrics/job/apns_push/activity_id/" .. activityPrefix .. a, headers, body)
end
