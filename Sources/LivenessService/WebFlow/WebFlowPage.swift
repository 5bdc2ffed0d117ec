/// `GET /`: the hosted web flow's one page. Every screen is a `<section class="screen">`; the
/// script (`/app.js`) shows one at a time. No inline script or style (the CSP forbids both):
/// the SVG overlay's geometry is set by the script through attributes.
enum WebFlowPage {
    static let source = #"""
<!doctype html>
<html lang="en" data-demo="off">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="color-scheme" content="light">
<meta name="robots" content="noindex">
<title>Verify it's you</title>
<link rel="icon" href="/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/app.css">
<script src="/app.js" defer></script>
</head>
<body>
<main id="app">
<noscript><p class="noscript">This check needs JavaScript. Turn it on for this site, then reload the page.</p></noscript>

<section id="landing" class="screen" aria-labelledby="landing-title">
  <div class="panel">
    <svg class="emblem" viewBox="0 0 64 64" aria-hidden="true" focusable="false">
      <circle cx="32" cy="32" r="29" class="emblem-ring"/>
      <circle cx="32" cy="27" r="10" class="emblem-face"/>
      <path d="M15 52c3-9 9-13 17-13s14 4 17 13" class="emblem-face"/>
    </svg>
    <h1 id="landing-title" tabindex="-1">Verify it's you</h1>
    <p class="lead">A quick check with your front camera that you are here in person. It takes a few seconds.</p>
    <ul class="tips">
      <li>Find good, even light on your face.</li>
      <li>Hold your phone at eye level and keep it still.</li>
      <li>Keep your face inside the circle and follow the prompts.</li>
    </ul>
    <button id="verify" class="primary" type="button" hidden>Verify</button>
    <p class="fine">Your camera is used only while the check runs. The video goes to the verification service for this check and is not kept by this page.</p>
    <p id="demo-note" class="fine" hidden>Demo mode: this page creates its own session (<code>liveness serve --demo</code>, this computer only).</p>
  </div>
</section>

<section id="scan" class="screen scan" aria-labelledby="scan-title" hidden>
  <header class="bar">
    <h1 id="scan-title" tabindex="-1">Face check</h1>
    <button id="close" class="close" type="button" aria-label="Cancel verification">
      <svg viewBox="0 0 24 24" aria-hidden="true" focusable="false"><path d="M6 6l12 12M18 6L6 18"/></svg>
    </button>
  </header>
  <div id="stage" class="stage">
    <video id="preview" class="preview" autoplay muted playsinline disablepictureinpicture></video>
    <svg id="overlay" class="overlay" preserveAspectRatio="xMidYMid slice" aria-hidden="true" focusable="false" hidden>
      <path id="dim" class="dim" fill-rule="evenodd" d="M0 0H640V480H0Z"/>
      <circle id="guide" class="guide" cx="320" cy="240" r="144"/>
    </svg>
  </div>
  <div id="hud" class="hud" role="status" aria-live="polite" aria-atomic="true">
    <p id="hud-cue" class="hud-cue" aria-hidden="true" hidden></p>
    <p id="hud-text" class="hud-text">Starting the camera…</p>
    <p id="hud-progress" class="hud-progress" hidden></p>
  </div>
</section>

<section id="result" class="screen" aria-labelledby="result-title" hidden>
  <div class="panel">
    <svg id="result-passed-icon" class="outcome passed" viewBox="0 0 64 64" aria-hidden="true" focusable="false" hidden>
      <circle cx="32" cy="32" r="29"/><path d="M19 33l9 9 18-19"/>
    </svg>
    <svg id="result-failed-icon" class="outcome failed" viewBox="0 0 64 64" aria-hidden="true" focusable="false" hidden>
      <circle cx="32" cy="32" r="29"/><path d="M22 22l20 20M42 22L22 42"/>
    </svg>
    <h1 id="result-title" tabindex="-1"></h1>
    <p id="result-message" class="lead"></p>
    <button id="result-again" class="primary" type="button" hidden>Try again</button>
    <p id="result-return" class="fine" hidden>You can now return to the app or site that sent you here.</p>
  </div>
</section>

<section id="cancelled" class="screen" aria-labelledby="cancelled-title" hidden>
  <div class="panel">
    <h1 id="cancelled-title" tabindex="-1">Verification cancelled</h1>
    <p id="cancelled-message" class="lead">You stopped the check. Nothing was verified and the camera is off.</p>
    <button id="cancelled-again" class="primary" type="button" hidden>Start again</button>
    <p id="cancelled-return" class="fine" hidden>Return to the app or site that sent you here to start a new check.</p>
  </div>
</section>

<section id="permission" class="screen" aria-labelledby="permission-title" hidden>
  <div class="panel">
    <svg class="emblem warn" viewBox="0 0 64 64" aria-hidden="true" focusable="false">
      <rect x="8" y="18" width="36" height="28" rx="5"/><path d="M44 28l12-7v22l-12-7z"/><path d="M6 10l52 44" class="strike"/>
    </svg>
    <h1 id="permission-title" tabindex="-1">Camera access is blocked</h1>
    <p class="lead">The check needs your front camera. Allow camera access for this site, then try again.</p>
    <ul class="tips">
      <li>In the browser: tap the camera or lock icon next to the address, and allow the camera.</li>
      <li>In an app: allow the camera for the app in your phone's settings.</li>
    </ul>
    <button id="permission-again" class="primary" type="button">Try again</button>
  </div>
</section>

<section id="nocamera" class="screen" aria-labelledby="nocamera-title" hidden>
  <div class="panel">
    <svg class="emblem warn" viewBox="0 0 64 64" aria-hidden="true" focusable="false">
      <rect x="8" y="18" width="36" height="28" rx="5"/><path d="M44 28l12-7v22l-12-7z"/>
    </svg>
    <h1 id="nocamera-title" tabindex="-1">No camera available</h1>
    <p id="nocamera-message" class="lead">We could not find a camera on this device. Connect one, or open this page on your phone, then try again.</p>
    <button id="nocamera-again" class="primary" type="button">Try again</button>
  </div>
</section>

<section id="connection" class="screen" aria-labelledby="connection-title" hidden>
  <div class="panel">
    <svg class="emblem warn" viewBox="0 0 64 64" aria-hidden="true" focusable="false">
      <path d="M10 26a32 32 0 0 1 44 0M18 34a20 20 0 0 1 28 0M26 42a8 8 0 0 1 12 0"/><circle cx="32" cy="50" r="3"/><path d="M8 8l48 48" class="strike"/>
    </svg>
    <h1 id="connection-title" tabindex="-1">Connection lost</h1>
    <p id="connection-message" class="lead">We lost the connection to the verification service. Check that you are online, then try again.</p>
    <button id="connection-again" class="primary" type="button">Try again</button>
    <p id="connection-return" class="fine" hidden>This check cannot be resumed. Return to the app or site that sent you here to start a new one.</p>
  </div>
</section>

<section id="link" class="screen" aria-labelledby="link-title" hidden>
  <div class="panel">
    <h1 id="link-title" tabindex="-1">This link cannot be used</h1>
    <p id="link-message" class="lead">This verification link is incomplete, has expired, or was already used. Return to the app or site that sent you here to start a new check.</p>
  </div>
</section>

</main>
</body>
</html>
"""#
}
