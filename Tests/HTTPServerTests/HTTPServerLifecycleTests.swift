import Dispatch
import Glibc
import HTTPServer
import Testing

/// Live tests: binding, errors, stopping.
@Suite struct HTTPServerLifecycleTests {
    @Test func portZeroBindsARealPort() throws {
        let server = try HTTPServer.forTesting { _ in .text("ok") }
        defer { server.stop() }
        #expect(server.port > 0 && server.port < 65536)
        #expect(try RawConnection(port: server.port).get("/").text == "ok")
    }

    /// One polling thread (`--http-threads 1`, and the default on a one-processor machine)
    /// starts without a word from libmicrohttpd: it warned at every start that a pool of one
    /// "is ignored. Thread pool is not used."
    @Test(arguments: [1, 2])
    func startsWithoutWarnings(_ threads: Int) throws {
        let lines = Locked<[String]>([])
        let server = try HTTPServer.forTesting({
            $0.threadPoolSize = threads
            $0.errorLog = { line in lines.withLock { $0.append(line) } }
        }) { _ in .text("ok") }
        defer { server.stop() }
        #expect(try RawConnection(port: server.port).get("/").text == "ok")
        #expect(lines.value == [])
    }

    @Test func bindingAPortInUseThrowsAnErrorNamingTheAddress() throws {
        let first = try HTTPServer.forTesting { _ in .text("first") }
        defer { first.stop() }
        do {
            let second = try HTTPServer.forTesting({ $0.port = first.port }) { _ in .text("second") }
            second.stop()
            Issue.record("second server bound the same port")
        } catch {
            guard case .cannotBind(let address, _) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(address == "127.0.0.1:\(first.port)")
            #expect(error.description.hasPrefix("cannot bind 127.0.0.1:\(first.port): "))
            #expect(error.description.lowercased().contains("in use"))
        }
        // The first server is unaffected.
        #expect(try RawConnection(port: first.port).get("/").text == "first")
    }

    @Test func invalidHostAndLimitsAreRejected() {
        #expect(throws: HTTPServerError.invalidHost("localhost")) {
            try HTTPServer.forTesting({ $0.host = "localhost" }) { _ in .text("") }
        }
        #expect(throws: HTTPServerError.self) {
            try HTTPServer.forTesting({ $0.port = 70_000 }) { _ in .text("") }
        }
        #expect(throws: HTTPServerError.self) {
            try HTTPServer.forTesting({ $0.maxConnections = 0 }) { _ in .text("") }
        }
    }

    @Test func stopLetsAnInFlightRequestFinishAndIsIdempotent() throws {
        let entered = DispatchSemaphore(value: 0)
        let finished = Locked(false)
        let server = try HTTPServer.forTesting { request in
            if request.path == "/slow" {
                entered.signal()
                usleep(300_000)
                finished.withLock { $0 = true }
                return .text("done")
            }
            return .text("fast")
        }
        let port = server.port

        // An idle keep-alive connection must not hold up stop().
        let idle = try RawConnection(port: port)
        #expect(try idle.get("/warm-up").text == "fast")

        let inFlight = Locked<Result<RawResponse, RawConnection.Failure>?>(nil)
        let client = Concurrently.start(threads: 1) { _ in
            do {
                let response = try RawConnection(port: port).get("/slow")
                inFlight.withLock { $0 = .success(response) }
            } catch {
                inFlight.withLock { $0 = .failure(error as? RawConnection.Failure ?? .closed) }
            }
        }
        #expect(entered.wait(timeout: .now() + 5) == .success)

        let start = DispatchTime.now()
        server.stop()
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9
        #expect(finished.value, "stop() returned before the in-flight handler finished")
        #expect(elapsed < 3, "stop() waited for the idle connection")

        #expect(client.wait(timeout: .now() + 5) == .success)
        let response = try #require(try inFlight.value?.get())
        #expect(response.status == 200)
        #expect(response.text == "done")
        #expect(response.header("connection")?.lowercased() == "close")

        #expect(idle.waitForClose())
        #expect(throws: RawConnection.Failure.connect(errno: ECONNREFUSED)) {
            try RawConnection(port: port)
        }
        server.stop()  // idempotent
    }

    @Test func stopFromAnotherThreadWhileClientsHammerDoesNotDeadlock() throws {
        let server = try HTTPServer.forTesting { _ in
            usleep(1_000)
            return .text("ok")
        }
        let port = server.port
        let stopped = Locked(false)
        let clients = Concurrently.start(threads: 8) { _ in
            while !stopped.value {
                _ = try? RawConnection(port: port, receiveTimeout: 2).get("/")
            }
        }
        usleep(100_000)
        // As from a signal-handling thread, and twice at once.
        let stops = Concurrently.start(threads: 2) { _ in server.stop() }
        #expect(stops.wait(timeout: .now() + 8) == .success)
        stopped.withLock { $0 = true }
        #expect(clients.wait(timeout: .now() + 5) == .success)
    }
}

extension HTTPServerLifecycleTests {
    @Test func droppingTheServerStopsIt() throws {
        var port = 0
        do {
            let server = try HTTPServer.forTesting { _ in .text("ok") }
            port = server.port
            #expect(try RawConnection(port: port).get("/").text == "ok")
        }
        #expect(throws: RawConnection.Failure.connect(errno: ECONNREFUSED)) {
            try RawConnection(port: port)
        }
    }
}
