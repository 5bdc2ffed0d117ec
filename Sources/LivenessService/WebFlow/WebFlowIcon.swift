/// `GET /icon.svg`: the web flow's tab icon (a face in a guide circle).
enum WebFlowIcon {
    static let source = #"""
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64"><circle cx="32" cy="32" r="30" fill="#1747c4"/><circle cx="32" cy="27" r="10" fill="none" stroke="#fff" stroke-width="4"/><path d="M15 52c3-9 9-13 17-13s14 4 17 13" fill="none" stroke="#fff" stroke-width="4" stroke-linecap="round"/></svg>
"""#
}
