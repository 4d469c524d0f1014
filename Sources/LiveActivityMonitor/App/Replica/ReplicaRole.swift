import HTTPServer
import Synchronization

/// This process's role and what it runs in it, and the HTTP entry points that answer as the
/// role allows: the leader's router (`buildMonitor`) while it leads, `StandbyAnswers` otherwise.
/// Over SQLite the one process leads from start to stop.
final class ReplicaRole: Sendable {
    enum Role: Sendable {
        case standby
        case leading(LeaderServices)
        /// Led and lost the lock (or is stopping): answers as a standby; what it ran is still
        /// to be stopped.
        case deposed(LeaderServices?)
    }

    private let role: Mutex<Role>
    let standby: StandbyAnswers

    init(_ role: Role, standby: StandbyAnswers) {
        self.role = Mutex(role)
        self.standby = standby
    }

    var current: Role { role.withLock { $0 } }

    /// Starts leading with `services` (elected).
    func lead(_ services: LeaderServices) {
        role.withLock { $0 = .leading(services) }
    }

    /// Stops acknowledging at once (the lock is lost, or the server stops); returns what the
    /// leader ran, for its owner to stop, once.
    @discardableResult
    func depose() -> LeaderServices? {
        role.withLock { r in
            defer { r = .deposed(nil) }
            switch r {
            case .leading(let services), .deposed(let services?): return services
            default: return nil
            }
        }
    }

    /// Like `depose`, but keeps the services for `depose` to hand out later.
    func markDeposed() {
        role.withLock { r in
            if case .leading(let services) = r { r = .deposed(services) }
        }
    }

    var isLeading: Bool {
        if case .leading = current { true } else { false }
    }

    // MARK: The HTTP server's entry points (`Router`'s, by role)

    func handle(_ request: HTTPRequest, answer: @escaping @Sendable (@escaping @Sendable () -> HTTPResponse) -> Void) {
        switch current {
        case .leading(let services):
            services.router.handle(request, answer: answer)
        case .standby, .deposed:
            standby.handle(request, deposed: isDeposed, answer: answer)
        }
    }

    func countServerAnswer(path: String, status: Int) {
        if case .leading(let services) = current { services.router.countServerAnswer(path: path, status: status) }
    }

    func checkBeforeContinue(_ request: HTTPRequest) -> HTTPResponse? {
        if case .leading(let services) = current { return services.router.checkBeforeContinue(request) }
        return standby.checkBeforeContinue(request, deposed: isDeposed)
    }

    private var isDeposed: Bool {
        if case .deposed = current { true } else { false }
    }
}
