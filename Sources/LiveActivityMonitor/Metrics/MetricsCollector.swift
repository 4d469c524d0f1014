import Prometheus

/// Builds every `liveactivity_` family at scrape time: gauges from the in-memory state at "now",
/// counters from the persisted totals. The activity gauges are kept as records change
/// (`ActivityGauges`): a scrape's cost grows with series, never with live activities or events.
struct MetricsCollector: Sendable {
    typealias M = MonitorMetrics
    let store: any MonitorStore
    let priority10Budget: Int
    let version: String
    let revision: String
    let httpRequests: CounterVec

    func collect() -> [MetricFamily] {
        // Never waits for the writer: gauges are read at `now` from what memory holds, and the
        // writer applies time's transitions to the counters on its own schedule. "Now" is read
        // inside, so that it is never before the commit the state comes from.
        var families = store.withLiveState { s in
            let gauges = s.records.gauges(at: store.clock.now(), priority10Budget: priority10Budget)
            return activityFamilies(gauges, labels: s.labels) + [pushToStartTokensFamily(s), channelsFamily(s),
             gauge(M.contentShapeTypes, [Sample(labels: Labels([]), value: .number(Double(s.shapes.typeCount)))])]
                + StoredFamilies.families(s.counters, types: Array(s.labels.known))
        }
        families.append(MetricFamily(name: M.evictedActivities.name, help: M.evictedActivities.help, type: .counter,
                                     samples: [Sample(labels: Labels([]), value: .number(Double(store.evictedActivities)))]))
        families.append(gauge(M.storeSize, [Sample(labels: Labels([]), value: .number(Double(store.sizeBytes)))]))
        families += Self.replicaFamilies(leader: true, version: version, revision: revision)
        let commit = store.commitDurations
        families.append(MetricFamily(name: M.commitSeconds.name, help: M.commitSeconds.help, type: .histogram,
                                     samples: [Sample(labels: Labels([]), value: .histogram(commit))]))
        families.append(httpRequests.family())
        return families
    }

    /// `liveactivity_activities` (every known type from zero, in each counted state), the
    /// priority-10 gauge and `liveactivity_channel_subscriptions` (every known type from zero),
    /// from the kept counts: each raw type's counts go to its label.
    private func activityFamilies(_ gauges: ActivityGauges, labels: AttributesTypeLabels) -> [MetricFamily] {
        var states: [ExactString: SIMD4<Int>] = [:]
        var subscribed: [ExactString: Int] = [:]
        for type in labels.known {
            states[ExactString(type)] = SIMD4(repeating: 0)
            subscribed[ExactString(type)] = 0
        }
        for (type, counts) in gauges.byType {
            let label = ExactString(labels.label(for: type.text))
            states[label, default: SIMD4(repeating: 0)] &+= counts.states
            if counts.subscribed > 0 { subscribed[label, default: 0] += counts.subscribed }
        }
        var samples: [Sample] = []
        for (type, values) in states {
            for (i, state) in ActivityState.counted.enumerated() {
                samples.append(Sample(labels: Labels([("attributes_type", type.text), ("state", state.rawValue)]),
                                      value: .number(Double(values[i]))))
            }
        }
        return [
            gauge(M.activities, samples),
            gauge(M.priority10Heavy, [Sample(labels: Labels([]), value: .number(Double(gauges.heavy)))]),
            gauge(M.channelSubscriptions, subscribed.map { type, count in
                Sample(labels: Labels([("attributes_type", type.text)]), value: .number(Double(count)))
            }),
        ]
    }

    /// Live channels by storage policy (0 and 1 from zero).
    private func channelsFamily(_ s: LiveState) -> MetricFamily {
        gauge(M.channels, s.channels.liveByPolicy.map { policy, count in
            Sample(labels: Labels([("storage_policy", policy)]), value: .number(Double(count)))
        })
    }

    /// Devices with a current push-to-start token, by label (every known type from zero).
    private func pushToStartTokensFamily(_ s: LiveState) -> MetricFamily {
        var counts: [ExactString: Int] = [:]
        for type in s.labels.known { counts[ExactString(type)] = 0 }
        for (type, count) in s.pushToStartTokens { counts[ExactString(s.labels.label(for: type.text)), default: 0] += count }
        return gauge(M.pushToStartTokens, counts.map { type, count in
            Sample(labels: Labels([("attributes_type", type.text)]), value: .number(Double(count)))
        })
    }

    /// What every replica exports, leader or standby (DESIGN.md section 9): which build it runs
    /// and whether it leads, so that `sum(liveactivity_leader)` over a job counts the leaders.
    static func replicaFamilies(leader: Bool, version: String, revision: String) -> [MetricFamily] {
        [MetricFamily(name: M.buildInfo.name, help: M.buildInfo.help, type: .gauge,
                      samples: [Sample(labels: Labels([("revision", revision), ("version", version)]), value: .number(1))]),
         MetricFamily(name: M.leader.name, help: M.leader.help, type: .gauge,
                      samples: [Sample(labels: Labels([]), value: .number(leader ? 1 : 0))])]
    }

    private func gauge(_ family: M.Family, _ samples: [Sample]) -> MetricFamily {
        MetricFamily(name: family.name, help: family.help, type: .gauge, samples: samples)
    }
}
