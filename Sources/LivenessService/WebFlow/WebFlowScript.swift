/// `GET /app.js`: the web flow's script (plain ES2017, no framework, no build step). It opens the
/// front camera after the user's tap on "Verify", streams JPEG frames (`canvas.toBlob`) with the
/// camera's own capture times over `liveness-stream/1`, draws the guide circle the `session`
/// message gives, shows the server's HUD text as sent — a prompted session's prompt large, with
/// an arrow for a turn and its step number — and ends on a result screen (the outcome, never a
/// score) or on a screen that says what went wrong and what to do.
enum WebFlowScript {
    /// The text of `Resources/app.js`, embedded at build time (`.embedInCode`).
    static let source = String(decoding: PackageResources.app_js, as: UTF8.self)
}
