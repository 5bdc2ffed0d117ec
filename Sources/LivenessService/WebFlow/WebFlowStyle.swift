/// `GET /app.css`: the web flow's style sheet. Mobile first (one column, 48 px touch targets,
/// safe-area insets), a card on wider screens; text contrast of at least 4.5:1 on every screen
/// (WCAG AA) and a visible focus ring for keyboard users.
enum WebFlowStyle {
    static let source = #"""
:root {
  --ink: #141821;
  --muted: #485164;
  --paper: #f3f5f9;
  --card: #ffffff;
  --accent: #1747c4;
  --accent-dark: #0f348f;
  --good: #0f7a3d;
  --bad: #b3261e;
  --warn: #8a5200;
  --night: #0b0d12;
  --aspect: 0.75;
  color-scheme: light;
}
*, *::before, *::after { box-sizing: border-box; }
[hidden] { display: none !important; }
html, body { margin: 0; height: 100%; }
body {
  font: 1rem/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "DejaVu Sans", sans-serif;
  color: var(--ink);
  background: var(--paper);
  -webkit-text-size-adjust: 100%;
}
main { min-height: 100%; }
.screen {
  min-height: 100vh;
  min-height: 100dvh;
  display: flex;
  flex-direction: column;
  align-items: center;
  justify-content: center;
  padding: max(1.25rem, env(safe-area-inset-top)) max(1.25rem, env(safe-area-inset-right))
           max(1.25rem, env(safe-area-inset-bottom)) max(1.25rem, env(safe-area-inset-left));
}
.panel { width: 100%; max-width: 28rem; text-align: center; }
.noscript { margin: 0; padding: 1rem 1.25rem; background: #fff4d6; color: var(--ink); text-align: center; }
h1 { font-size: 1.75rem; line-height: 1.25; margin: 0.75rem 0 0.5rem; text-wrap: balance; }
h1:focus { outline: none; }
.lead { font-size: 1.0625rem; color: var(--ink); margin: 0 0 1rem; }
.fine { font-size: 0.875rem; color: var(--muted); margin: 1rem 0 0; }
.tips { text-align: left; margin: 0 0 1.5rem; padding-left: 1.25rem; color: var(--ink); }
.tips li { margin: 0.25rem 0; }
button { font: inherit; cursor: pointer; }
.primary {
  display: block;
  width: 100%;
  min-height: 3rem;
  padding: 0.75rem 1.25rem;
  border: 0;
  border-radius: 0.75rem;
  background: var(--accent);
  color: #fff;
  font-size: 1.125rem;
  font-weight: 600;
}
.primary:hover { background: var(--accent-dark); }
.primary:active { transform: translateY(1px); }
:focus-visible { outline: 3px solid var(--accent); outline-offset: 3px; }
.emblem { width: 4.5rem; height: 4.5rem; fill: none; stroke: var(--accent); stroke-width: 3; stroke-linecap: round; stroke-linejoin: round; }
.emblem.warn { stroke: var(--warn); }
.emblem .strike { stroke-width: 4; }
.outcome { width: 5rem; height: 5rem; fill: none; stroke-width: 4; stroke-linecap: round; stroke-linejoin: round; }
.outcome.passed { stroke: var(--good); }
.outcome.failed { stroke: var(--bad); }
.visually-hidden {
  position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; border: 0;
}

/* The scan: the mirrored preview with the guide circle, the HUD below, a close button. */
.scan {
  background: var(--night);
  color: #fff;
  justify-content: flex-start;
  gap: 1rem;
}
.bar {
  width: 100%;
  max-width: 36rem;
  display: flex;
  align-items: center;
  justify-content: space-between;
}
.bar h1 { font-size: 1.125rem; margin: 0; font-weight: 600; }
.close {
  width: 3rem;
  height: 3rem;
  display: inline-flex;
  align-items: center;
  justify-content: center;
  border: 0;
  border-radius: 50%;
  background: rgba(255, 255, 255, 0.16);
  color: #fff;
}
.close:hover { background: rgba(255, 255, 255, 0.28); }
.close svg { width: 1.5rem; height: 1.5rem; fill: none; stroke: currentColor; stroke-width: 2.5; stroke-linecap: round; }
.scan :focus-visible { outline-color: #fff; }
.stage {
  position: relative;
  width: min(100%, 36rem, calc((100vh - 13rem) * var(--aspect)));
  width: min(100%, 36rem, calc((100dvh - 13rem) * var(--aspect)));
  aspect-ratio: var(--aspect);
  border-radius: 1.25rem;
  overflow: hidden;
  background: #000;
  isolation: isolate;
}
.preview {
  display: block;
  width: 100%;
  height: 100%;
  object-fit: cover;
  transform: scaleX(-1); /* a mirror, as users expect of a front camera */
  position: relative;
  z-index: 0;
}
.overlay { position: absolute; inset: 0; width: 100%; height: 100%; z-index: 1; }
.dim { fill: var(--night); fill-opacity: 0.7; }
.guide { fill: none; stroke: #fff; stroke-width: 4px; vector-effect: non-scaling-stroke; }
.guide.outside { stroke: #ffd166; stroke-dasharray: 10 8; }
.guide.progress, .guide.verifying { stroke: #4ade80; stroke-width: 6px; }
.scan .stage { margin-top: auto; }
.hud { width: 100%; max-width: 36rem; text-align: center; min-height: 5rem; margin-bottom: auto; }
.hud-text { font-size: 1.375rem; line-height: 1.3; font-weight: 600; margin: 0.25rem 0; }
.hud-progress { font-size: 1.0625rem; color: #d4dae6; margin: 0; }
/* A prompted session's open prompt: the instruction large, on a bright plate, with its cue. */
.guide.prompt { stroke: #ffd166; stroke-width: 6px; }
.hud.prompting {
  background: #ffd166;
  color: var(--night);
  border-radius: 1rem;
  padding: 0.5rem 1rem 0.75rem;
}
.hud.prompting .hud-text { font-size: 2rem; line-height: 1.2; font-weight: 700; }
.hud.prompting .hud-progress { color: #3a2a00; font-weight: 600; }
.hud-cue { font-size: 3rem; line-height: 1; font-weight: 700; margin: 0; }

@media (min-width: 40rem) {
  .panel {
    background: var(--card);
    padding: 2.5rem 2.5rem 2rem;
    border-radius: 1.25rem;
    box-shadow: 0 1px 2px rgba(20, 24, 33, 0.06), 0 12px 32px rgba(20, 24, 33, 0.08);
  }
}
@media (prefers-reduced-motion: reduce) {
  * { transition: none !important; animation: none !important; }
}
"""#
}
