import Prometheus

/// Builds every `liveactivity_` family at scrape time: gauges from the in-memory state at "now",
/// counters from the persisted totals. Its cost grows with live activities, never with events.
struct MetricsCollector: Sendable {
    typealias M = MonitorMetrics
    /// Distinct raw attributes types tallied by scan before falling back to hashing.
    static let maxTallies = 64
    let store: any MonitorStore
    let priority10Budget: Int
    let version: String
    let revision: String
    let httpRequests: CounterVec

    func collect() -> [MetricFamily] {
        // Never waits for the writer: gauges are computed at `now` from what memory holds, and
        // the writer applies time's transitions to the counters on its own schedule.
        let now = store.clock.now()
        var families = store.withLiveState { s in
            [activitiesFamily(s, now: now), heavyFamily(s, now: now), pushToStartTokensFamily(s),
             subscriptionsFamily(s, now: now), channelsFamily(s),
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

    private func activitiesFamily(_ s: LiveState, now: Double) -> MetricFamily {
        // Tally by raw type first: records share a few interned type strings, so a short scan
        // comparing by identity beats hashing every record's type into the label set.
        var tallies: [(type: String, counts: [Int])] = []
        var counts: [ExactString: [Int]] = [:]
        for type in s.labels.known { counts[ExactString(type)] = [0, 0, 0, 0] }
        s.records.withRecords { records in
            for i in records.indices {
                let index: Int
                switch records[i].state(at: now) {
                case .active: index = 0
                case .stale: index = 1
                case .ended: index = 2
                case .pending: index = 3
                default: continue
                }
                if let k = tallies.firstIndex(where: { ExactText.equal($0.type, records[i].attributesType) }) {
                    tallies[k].counts[index] += 1
                } else if tallies.count < Self.maxTallies {
                    var fresh = [0, 0, 0, 0]
                    fresh[index] = 1
                    tallies.append((records[i].attributesType, fresh))
                } else {
                    counts[ExactString(s.labels.label(for: records[i].attributesType)), default: [0, 0, 0, 0]][index] += 1
                }
            }
        }
        for (type, tally) in tallies {
            let label = ExactString(s.labels.label(for: type))
            var total = counts[label] ?? [0, 0, 0, 0]
            for i in 0..<4 { total[i] += tally[i] }
            counts[label] = total
        }
        var samples: [Sample] = []
        for (type, values) in counts {
            for (i, state) in ActivityState.counted.enumerated() {
                samples.append(Sample(labels: Labels([("attributes_type", type.text), ("state", state.rawValue)]),
                                      value: .number(Double(values[i]))))
            }
        }
        return gauge(M.activities, samples)
    }

    private func heavyFamily(_ s: LiveState, now: Double) -> MetricFamily {
        var heavy = 0
        s.records.withRecords { records in
            for i in records.indices where records[i].isPriority10Heavy(at: now, budget: priority10Budget) { heavy += 1 }
        }
        return gauge(M.priority10Heavy, [Sample(labels: Labels([]), value: .number(Double(heavy)))])
    }

    /// Live activities subscribed to a channel, by label (every known type from zero).
    private func subscriptionsFamily(_ s: LiveState, now: Double) -> MetricFamily {
        var counts: [ExactString: Int] = [:]
        for type in s.labels.known { counts[ExactString(type)] = 0 }
        s.records.withRecords { records in
            for i in records.indices where records[i].channelID != nil && records[i].isSubscribed(at: now) {
                counts[ExactString(s.labels.label(for: records[i].attributesType)), default: 0] += 1
            }
        }
        return gauge(M.channelSubscriptions, counts.map { type, count in
            Sample(labels: Labels([("attributes_type", type.text)]), value: .number(Double(count)))
        })
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
