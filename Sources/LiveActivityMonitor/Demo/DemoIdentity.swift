/// Who one simulated activity is: its ActivityKit id, booking, app and current push token.
struct DemoIdentity: Sendable {
    var activityID: String
    var bookingID: String
    var app: String
    var token: String
}
