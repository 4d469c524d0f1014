import Dispatch
import Glibc
import HTTPServer
import Testing

/// Live tests of what clients see while ``HTTPServer/stop()`` waits for requests in flight.
@Suite struct HTTPServerShutdownTests {
    @Test func newConnectionsAreRefusedAtOnceWhileARequestIsFinishing() throws {
        let log = Locked<[String]>([])
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let server = try HTTPServer.forTesting({ configuration in
            configuration.errorLog = { message in log.withLock { $0.append(message) } }
        }) { request in
            if request.path == "/slow" {
                entered.signal()
                _ = release.wait(timeout: .now() + 10)
                return .text("done")
            }
            return .text("fast")
        }
        let port = server.port

        let inFlight = Locked<Result<RawResponse, RawConnection.Failure>?>(nil)
        let client = Concurrently.start(threads: 1) { _ in
            do {
                let response = try RawConnection(port: port, receiveTimeout: 10).get("/slow")
                inFlight.withLock { $0 = .success(response) }
            } catch {
                inFlight.withLock { $0 = .failure(error as? RawConnection.Failure ?? .closed) }
            }
        }
        #expect(entered.wait(timeout: .now() + 5) == .success)

        let stopping = Concurrently.start(threads: 1) { _ in server.stop() }
        // Connections made before stop() got going are accepted (and idle); once it has, every
        // attempt must be refused by the kernel, not left in the listen backlog until the daemon
        // stops (about 9 s with the default grace period).
        let start = DispatchTime.now()
        func elapsed() -> Double { Double(DispatchTime.now().uptimeNanoseconds - start.uptimeNanoseconds) / 1e9 }
        var refusedAfter: Double?
        var opened: [RawConnection] = []
        while refusedAfter == nil && elapsed() < 3 {
            do {
                opened.append(try RawConnection(port: port, receiveTimeout: 0.2))
                usleep(20_000)
            } catch RawConnection.Failure.connect(errno: ECONNREFUSED) {
                refusedAfter = elapsed()
            } catch RawConnection.Failure.connect(errno: ECONNRESET) {
                // Caught in the backlog at the moment the socket stopped listening: reset, not left waiting.
                refusedAfter = elapsed()
            }
        }
        #expect(refusedAfter != nil, "connections kept completing their handshake during stop()")
        // Well under the grace period's 9 s; not 1 s: a build beside the suite once took 1.007 s.
        #expect((refusedAfter ?? .infinity) < 2.5)
        #expect(inFlight.value == nil, "the request in flight was not in flight any more")
        opened.removeAll()

        release.signal()
        #expect(stopping.wait(timeout: .now() + 5) == .success)
        #expect(client.wait(timeout: .now() + 5) == .success)
        let response = try #require(try inFlight.value?.get())
        #expect(response.status == 200)
        #expect(response.text == "done")
        #expect(response.header("connection")?.lowercased() == "close")
        #expect(!log.value.contains { $0.contains("grace period") }, "\(log.value)")
    }

    @Test func requestsCutOffByTheGracePeriodAreLoggedOnceWithTheirCount() throws {
        let log = Locked<[String]>([])
        let entered = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        let server = try HTTPServer.forTesting({ configuration in
            configuration.shutdownGracePeriodSeconds = 0.2
            configuration.errorLog = { message in log.withLock { $0.append(message) } }
        }) { _ in
            entered.signal()
            _ = release.wait(timeout: .now() + 10)
            return .text("too late")
        }
        let port = server.port
        let answers = Locked<[Result<RawResponse, RawConnection.Failure>]>([])
        let clients = Concurrently.start(threads: 2) { _ in
            do {
                let response = try RawConnection(port: port, receiveTimeout: 10).get("/slow")
                answers.withLock { $0.append(.success(response)) }
            } catch {
                answers.withLock { $0.append(.failure(error as? RawConnection.Failure ?? .closed)) }
            }
        }
        #expect(entered.wait(timeout: .now() + 5) == .success)
        #expect(entered.wait(timeout: .now() + 5) == .success)

        let stopping = Concurrently.start(threads: 1) { _ in server.stop() }
        // stop() logs when the grace period is over, then waits in MHD_stop_daemon for the
        // handlers' threads: release them once the line is there.
        let deadline = DispatchTime.now() + 5
        while !log.value.contains(where: { $0.contains("grace period") }) && DispatchTime.now() < deadline {
            usleep(10_000)
        }
        release.signal()
        release.signal()
        #expect(stopping.wait(timeout: .now() + 5) == .success)
        #expect(clients.wait(timeout: .now() + 5) == .success)

        let lines = log.value.filter { $0.contains("grace period") }
        #expect(lines == ["HTTPServer: shutdown grace period (0.2 s) over: "
                          + "closing 2 connections whose request was not answered"], "\(log.value)")
        #expect(answers.value.count == 2)
        #expect(answers.value.allSatisfy { (try? $0.get()) == nil }, "a cut-off request was answered")
    }
}
