'use strict';
(function () {
  // Frames go out at a steady rate chosen from the camera's frames; a `flow: slow` from the
  // service halves it (down to MIN_FPS), `flow: resume` brings it back up step by step.
  var TARGET_FPS = 15;
  var MIN_FPS = 4;
  var MAX_SIDE = 640;             // longer side of the frames sent, pixels
  var JPEG_QUALITY = 0.8;
  var MAX_BUFFERED_BYTES = 1 << 20; // the socket's own backlog: frames wait, never pile up
  var SILENCE_LIMIT_MS = 35000;   // longer than settle + framing + the 20 s scan cap + grace
  var RAMP_STEP_MS = 1000;
  var HEX = /^[0-9a-f]{8,128}$/;

  var $ = function (id) { return document.getElementById(id); };
  // `hidden` as an attribute: SVG elements have no `hidden` property.
  var reveal = function (element, shown) {
    if (shown) element.removeAttribute('hidden'); else element.setAttribute('hidden', '');
  };
  var demo = document.documentElement.getAttribute('data-demo') === 'on';

  var state = {
    link: null,          // an unused session {id, token}: from the fragment, or made in demo mode
    spent: false,        // a stream was opened: the single-use token is gone
    attempt: 0,          // bumped by every start and cancel; stale async steps stop
    media: null,
    ws: null,
    capturing: false,
    verdict: null,
    cancelled: false,
    shuttingDown: false, // the service said it is stopping: its `cancelled` verdict is a lost connection
    seq: 0,
    lastMicros: -1,
    clock: null,         // 'capture' (the camera's capture time) or 'callback'
    nextDue: 0,
    fps: TARGET_FPS,
    recovering: false,
    lastRamp: 0,
    encoding: false,
    lastMessageAt: 0,
    watchdog: 0,
    canvas: document.createElement('canvas'),
    context: null,
    sourceWidth: 0,      // the camera's frame size
    sourceHeight: 0,
    width: 0,            // the size of the frames sent
    height: 0,
    guide: null,
    prompt: null         // the open prompt's {index, total} from the `prompt` message
  };

  // ---- Screens -----------------------------------------------------------------------------

  function show(name) {
    var screens = document.querySelectorAll('.screen');
    for (var i = 0; i < screens.length; i++) screens[i].hidden = screens[i].id !== name;
    document.body.setAttribute('data-screen', name);
    var heading = $(name + '-title');
    if (heading) heading.focus({ preventScroll: true });
  }

  function showLink(message) {
    if (message) $('link-message').textContent = message;
    show('link');
  }

  function showNoCamera(message) {
    $('nocamera-message').textContent = message ||
      'We could not find a camera on this device. Connect one, or open this page on your phone, then try again.';
    show('nocamera');
  }

  function canStartAgain() { return demo || state.link !== null; }

  function lost(message) {
    halt();
    $('connection-message').textContent = message ||
      'We lost the connection to the verification service. Check that you are online, then try again.';
    var again = canStartAgain();
    $('connection-again').hidden = !again;
    $('connection-return').hidden = again;
    show('connection');
  }

  var FAILURES = {
    timeout: 'The check ran out of time. Keep your face inside the circle, in good light, hold the camera still and follow the prompts.',
    noFace: 'We could not see a face. Make sure your face is well lit and inside the circle.',
    cancelled: 'The check was interrupted before it finished.',
    invalidInput: 'The camera images could not be used for the check.',
    notVerified: 'We could not verify you. Make sure your face is well lit, look straight at the camera and try again.',
    challengeNotFollowed: 'The check did not see what it asked for. Look straight at the camera between prompts, and do each one as soon as it appears: turn only when asked, to the side asked.'
  };

  function showResult(status, reason) {
    var passed = status === 'passed';
    var result = $('result');
    result.setAttribute('data-status', passed ? 'passed' : 'failed');
    result.setAttribute('data-reason', reason || '');
    $('result-title').textContent = passed ? 'You\u2019re verified' : 'We couldn\u2019t verify you';
    $('result-message').textContent = passed ? 'Thank you. The check is complete.'
      : (FAILURES[reason] || 'The check did not succeed.');
    reveal($('result-passed-icon'), passed);
    reveal($('result-failed-icon'), !passed);
    $('result-again').hidden = !demo;
    $('result-again').textContent = passed ? 'Verify again' : 'Try again';
    $('result-return').hidden = demo;
    $('result-return').textContent = passed ? 'You can now return to the app or site that sent you here.'
      : 'To try again, return to the app or site that sent you here and start a new check.';
    show('result');
  }

  function showCancelled(message) {
    $('cancelled-message').textContent = message || 'You stopped the check. Nothing was verified and the camera is off.';
    var again = canStartAgain();
    $('cancelled-again').hidden = !again;
    $('cancelled-return').hidden = again;
    show('cancelled');
  }

  // The prompt's cue: an arrow the way the head turns in the mirrored preview (the user's own
  // left is the preview's left), an eye for a blink.
  var CUES = { turnLeft: '\u2190', turnRight: '\u2192', blink: '\u25c9' };

  function setHud(text, name, done, total, step) {
    $('hud-text').textContent = text;
    var progress = $('hud-progress');
    var prompting = name === 'prompt';
    if (name === 'progress' && typeof done === 'number' && typeof total === 'number') {
      progress.textContent = done + ' of ' + total;
      progress.hidden = false;
    } else if (prompting && state.prompt && typeof state.prompt.index === 'number' && typeof state.prompt.total === 'number') {
      progress.textContent = 'Step ' + (state.prompt.index + 1) + ' of ' + state.prompt.total;
      progress.hidden = false;
    } else {
      progress.hidden = true;
    }
    // While a prompt is open its text is the one thing to read: large, with its cue.
    var hud = $('hud');
    hud.setAttribute('class', 'hud' + (prompting ? ' prompting' : ''));
    if (prompting && CUES[step]) hud.setAttribute('data-prompt', step); else hud.removeAttribute('data-prompt');
    var cue = $('hud-cue');
    cue.textContent = prompting && CUES[step] ? CUES[step] : '';
    cue.hidden = !(prompting && CUES[step]);
    var guide = $('guide');
    guide.setAttribute('class', 'guide' + (name === 'outsideGuide' ? ' outside' : name === 'progress' ? ' progress'
      : prompting ? ' prompt' : name === 'verifying' ? ' verifying' : ''));
  }

  // The circle the engine tests, in the sent frame's coordinates, mirrored like the preview.
  function setGuide(guide) {
    if (!guide || !isFinite(guide.centerX) || !isFinite(guide.centerY) || !isFinite(guide.radius)) return;
    state.guide = guide;
    var w = state.width, h = state.height;
    var overlay = $('overlay');
    overlay.setAttribute('viewBox', '0 0 ' + w + ' ' + h);
    var cx = (1 - guide.centerX) * w, cy = guide.centerY * h, r = guide.radius * Math.min(w, h);
    var circle = $('guide');
    circle.setAttribute('cx', String(cx));
    circle.setAttribute('cy', String(cy));
    circle.setAttribute('r', String(r));
    // The frame dimmed outside the circle: the frame's rectangle with the circle cut out.
    $('dim').setAttribute('d', 'M0 0H' + w + 'V' + h + 'H0Z M' + (cx - r) + ' ' + cy + 'a' + r + ' ' + r + ' 0 1 0 ' + (2 * r) +
      ' 0a' + r + ' ' + r + ' 0 1 0 ' + (-2 * r) + ' 0Z');
    reveal(overlay, true);
  }

  // ---- The session link ----------------------------------------------------------------------

  function readFragment() {
    var hash = location.hash.charAt(0) === '#' ? location.hash.slice(1) : '';
    if (!hash) return null;
    // The token must not stay in the address bar, the history or a screenshot of either.
    history.replaceState(null, '', location.pathname + location.search);
    var params = new URLSearchParams(hash);
    var id = params.get('session'), token = params.get('token');
    if (id && token && HEX.test(id) && HEX.test(token)) return { id: id, token: token };
    return 'invalid';
  }

  function demoSession() {
    return fetch('/demo/sessions', { method: 'POST', cache: 'no-store', credentials: 'omit' }).then(function (response) {
      if (response.status === 201) {
        return response.json().then(function (body) {
          if (body && HEX.test(body.id) && HEX.test(body.token)) return { id: body.id, token: body.token };
          throw new Error('bad session');
        });
      }
      if (response.status === 503) { lost('The verification service is busy. Try again in a moment.'); return null; }
      halt();
      showLink('This page was not opened with a verification link. Start from the app or site that asks you to verify.');
      return null;
    }, function () {
      lost('We could not reach the verification service. Check that you are online, then try again.');
      return null;
    });
  }

  function reachable() {
    return fetch('/healthz', { cache: 'no-store', credentials: 'omit' })
      .then(function (r) { return r.ok; }, function () { return false; });
  }

  // ---- Camera --------------------------------------------------------------------------------

  function openCamera() {
    if (!window.isSecureContext) {
      showNoCamera('The camera can only be used over a secure (https) connection.');
      return Promise.resolve(false);
    }
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      showNoCamera('This browser cannot use a camera here. Open the page in an up-to-date browser.');
      return Promise.resolve(false);
    }
    var constraints = {
      audio: false,
      video: { facingMode: 'user', width: { ideal: 640 }, height: { ideal: 480 }, frameRate: { ideal: 30 } }
    };
    return navigator.mediaDevices.getUserMedia(constraints).then(function (media) {
      state.media = media;
      // The camera taken away mid-check (unplugged, another app, the permission revoked).
      media.getVideoTracks().forEach(function (track) {
        track.addEventListener('ended', function () {
          if (state.media !== media || state.verdict || state.cancelled) return;
          state.attempt++;
          state.cancelled = true;
          dropStream();
          halt();
          showNoCamera('The camera stopped sending pictures. Check that no other app is using it, then try again.');
        });
      });
      var video = $('preview');
      video.srcObject = media;
      return new Promise(function (resolve) {
        var settle = function () {
          if (video.videoWidth > 0 && video.videoHeight > 0) { resolve(true); return true; }
          return false;
        };
        video.addEventListener('loadedmetadata', settle, { once: true });
        var play = video.play();
        if (play && play.catch) play.catch(function () {});
        var waited = 0;
        var poll = setInterval(function () {
          waited += 100;
          if (settle() || waited > 10000) { clearInterval(poll); resolve(video.videoWidth > 0); }
        }, 100);
      }).then(function (ok) {
        if (!ok) { showNoCamera('The camera started but sent no picture. Close other apps that use it, then try again.'); return false; }
        state.sourceWidth = state.sourceHeight = 0;
        fitFrames();
        return true;
      });
    }, function (error) {
      var name = error && error.name;
      if (name === 'NotAllowedError' || name === 'SecurityError' || name === 'PermissionDeniedError') {
        show('permission');
      } else if (name === 'NotFoundError' || name === 'DevicesNotFoundError' || name === 'OverconstrainedError') {
        showNoCamera();
      } else if (name === 'NotReadableError' || name === 'TrackStartError' || name === 'AbortError') {
        showNoCamera('Your camera is in use by another app or could not be started. Close other apps that use it, then try again.');
      } else {
        showNoCamera('The camera could not be started' + (name ? ' (' + name + ')' : '') + '. Try again.');
      }
      return false;
    });
  }

  // The size of the frames sent: the camera's, the longer side at most MAX_SIDE. Recomputed when
  // the camera's size changes (a phone turned), the circle redrawn to match.
  function fitFrames() {
    var video = $('preview'), w = video.videoWidth, h = video.videoHeight;
    if (!w || !h || (w === state.sourceWidth && h === state.sourceHeight)) return;
    state.sourceWidth = w;
    state.sourceHeight = h;
    var scale = Math.min(1, MAX_SIDE / Math.max(w, h));
    state.width = Math.round(w * scale);
    state.height = Math.round(h * scale);
    state.canvas.width = state.width;
    state.canvas.height = state.height;
    state.context = state.canvas.getContext('2d', { alpha: false });
    $('stage').style.setProperty('--aspect', String(w / h));
    if (state.guide) setGuide(state.guide);
  }

  function stopCamera() {
    if (state.media) state.media.getTracks().forEach(function (t) { t.stop(); });
    state.media = null;
    $('preview').srcObject = null;
  }

  // ---- Frames --------------------------------------------------------------------------------

  function startCapture() {
    state.capturing = true;
    state.nextDue = 0;
    state.fps = TARGET_FPS;
    state.recovering = false;
    schedule();
  }

  function stopCapture() { state.capturing = false; }

  function schedule() {
    if (!state.capturing) return;
    var video = $('preview');
    if (video.requestVideoFrameCallback) video.requestVideoFrameCallback(onVideoFrame);
    else setTimeout(function () { onVideoFrame(performance.now(), null); }, 1000 / 30);
  }

  // One camera frame: its capture time (the camera's clock where the browser gives it, else the
  // time the frame was handed over) decides whether it is due.
  function onVideoFrame(now, metadata) {
    if (!state.capturing) return;
    schedule();
    if (state.clock === null) {
      state.clock = metadata && typeof metadata.captureTime === 'number' && metadata.captureTime > 0 ? 'capture' : 'callback';
    }
    var t = state.clock === 'capture' && metadata && metadata.captureTime > 0 ? metadata.captureTime : now;
    var micros = Math.round(t * 1000);
    if (micros <= state.lastMicros) return; // the same frame again, or a clock step back
    var ws = state.ws;
    if (state.encoding || !ws || ws.readyState !== WebSocket.OPEN || ws.bufferedAmount > MAX_BUFFERED_BYTES) return;
    if (state.recovering && t - state.lastRamp >= RAMP_STEP_MS) {
      state.fps = Math.min(TARGET_FPS, state.fps * 1.5);
      state.lastRamp = t;
      if (state.fps >= TARGET_FPS) state.recovering = false;
    }
    var interval = 1000 / state.fps;
    if (t < state.nextDue - 2) return;
    state.nextDue = t - state.nextDue > interval ? t + interval : state.nextDue + interval;
    state.lastMicros = micros;
    fitFrames();
    sendFrame(micros);
  }

  function sendFrame(micros) {
    state.encoding = true;
    state.context.drawImage($('preview'), 0, 0, state.width, state.height);
    state.canvas.toBlob(function (blob) {
      if (!blob) { state.encoding = false; return; }
      blob.arrayBuffer().then(function (jpeg) {
        state.encoding = false;
        var ws = state.ws;
        if (!state.capturing || !ws || ws.readyState !== WebSocket.OPEN) return;
        // The 32-byte LVF1 header (little-endian): sequence, capture time in µs, format 0 (JPEG),
        // rotation 0 (the browser hands over upright frames), sizes 0 (read from the JPEG).
        var message = new Uint8Array(32 + jpeg.byteLength);
        var header = new DataView(message.buffer, 0, 32);
        message.set([0x4c, 0x56, 0x46, 0x31], 0);
        header.setUint32(4, state.seq >>> 0, true);
        header.setUint32(8, micros % 4294967296, true);
        header.setUint32(12, Math.floor(micros / 4294967296), true);
        message.set(new Uint8Array(jpeg), 32);
        ws.send(message.buffer);
        state.seq += 1;
      }, function () { state.encoding = false; });
    }, 'image/jpeg', JPEG_QUALITY);
  }

  // ---- The stream ----------------------------------------------------------------------------

  function connect(link, attempt) {
    var scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    var ws;
    try {
      ws = new WebSocket(scheme + '//' + location.host + '/v1/sessions/' + link.id + '/stream',
                         ['liveness.v1', 'token.' + link.token]);
    } catch (e) {
      lost();
      return;
    }
    ws.binaryType = 'arraybuffer';
    state.ws = ws;
    document.body.setAttribute('data-session', link.id);
    var opened = false;
    setHud('Connecting\u2026');
    ws.onopen = function () {
      opened = true;
      if (state.link === link) state.link = null;
      state.spent = true;
      state.lastMessageAt = performance.now();
      // The largest frame in either orientation: a phone turned mid-check still fits.
      var side = Math.max(state.width, state.height);
      ws.send(JSON.stringify({ type: 'start', width: side, height: side, fps: TARGET_FPS }));
      state.watchdog = setInterval(function () {
        if (state.ws === ws && performance.now() - state.lastMessageAt > SILENCE_LIMIT_MS) {
          state.ws = null;
          ws.close();
          lost('The verification service stopped answering. Check that you are online, then try again.');
        }
      }, 1000);
    };
    ws.onmessage = function (event) {
      if (state.ws !== ws || typeof event.data !== 'string') return;
      var message;
      try { message = JSON.parse(event.data); } catch (e) { return; }
      state.lastMessageAt = performance.now();
      receive(message);
    };
    ws.onclose = function () {
      if (state.ws !== ws) return; // a socket given up already (cancel, a new start)
      state.ws = null;
      if (state.verdict || state.cancelled) { halt(); return; }
      if (opened) { lost(); return; }
      // Never opened: the service refused the session (unknown, expired, used) or is unreachable.
      halt();
      reachable().then(function (up) {
        if (attempt !== state.attempt) return;
        if (!up) { lost('We could not reach the verification service. Check that you are online, then try again.'); return; }
        if (state.link === link) state.link = null;
        if (demo) lost('The service did not accept the session. Try again.');
        else showLink('This verification link has expired or was already used. Return to the app or site that sent you here to start a new check.');
      });
    };
  }

  function receive(message) {
    switch (message.type) {
      case 'session':
        setGuide(message.guide);
        startCapture();
        break;
      case 'prompt':
        // The HUD message that follows shows it; this one says which step of how many.
        state.prompt = { index: message.index, total: message.total };
        break;
      case 'hud':
        if (typeof message.text === 'string') setHud(message.text, message.state, message.done, message.total, message.prompt);
        break;
      case 'flow':
        if (message.state === 'slow') {
          state.fps = Math.max(MIN_FPS, state.fps / 2);
          state.recovering = false;
        } else if (message.state === 'resume') {
          state.recovering = true;
          state.lastRamp = performance.now();
        }
        break;
      case 'verdict':
        state.verdict = message;
        halt();
        if (state.shuttingDown && message.reason === 'cancelled') {
          // Not the user's doing: the service stopped (a restart, a deploy). Trying again helps.
          lost('The verification service stopped while checking. Try again in a moment.');
        } else if (!state.cancelled) {
          showResult(message.status, message.reason);
        }
        break;
      case 'error':
        if (message.code === 'sessionEnded') state.shuttingDown = true;
        if (window.console) console.warn('liveness: ' + message.code + ': ' + message.message);
        break;
      default:
        break; // autoshot, action, snapshot, promptAnswered: the HUD already says how far the check is
    }
  }

  // Stops frames, the camera and the watchdog (the socket is closed by whoever ends the stream).
  function halt() {
    stopCapture();
    stopCamera();
    if (state.watchdog) clearInterval(state.watchdog);
    state.watchdog = 0;
  }

  // ---- Actions -------------------------------------------------------------------------------

  // Ends the stream from this side: `cancel` tells the service (the session ends
  // failed/cancelled), then the socket closes.
  function dropStream() {
    var ws = state.ws;
    state.ws = null;
    if (ws && ws.readyState === WebSocket.OPEN) {
      try { ws.send(JSON.stringify({ type: 'cancel' })); } catch (e) { /* closing anyway */ }
      setTimeout(function () { if (ws.readyState !== WebSocket.CLOSED) ws.close(1000, 'cancelled'); }, 2000);
    } else if (ws) {
      ws.close();
    }
  }

  function start() {
    var attempt = ++state.attempt;
    dropStream();
    state.verdict = null;
    state.cancelled = false;
    state.shuttingDown = false;
    state.seq = 0;
    state.lastMicros = -1;
    state.clock = null;
    state.guide = null;
    state.prompt = null;
    reveal($('overlay'), false);
    setHud('Starting the camera\u2026');
    show('scan');
    // A link is asked about before the camera turns on: a spent or expired one never does.
    var usable = state.link ? linkUsable(state.link) : Promise.resolve(true);
    usable.then(function (ok) {
      if (!ok || attempt !== state.attempt) return false;
      return openCamera();
    }).then(function (ok) {
      if (attempt !== state.attempt) { if (ok) stopCamera(); return null; }
      if (!ok) { halt(); return null; }
      if (state.link) return state.link;
      if (demo) return demoSession().then(function (made) { if (made) state.link = made; return made; });
      halt();
      showLink('This verification link was already used. Return to the app or site that sent you here to start a new check.');
      return null;
    }).then(function (link) {
      if (!link || attempt !== state.attempt) return;
      connect(link, attempt);
    });
  }

  // Whether the service would open the link's stream now (GET …/stream with the session token
  // claims nothing). A spent or unknown link shows its screen; no answer is a lost connection.
  function linkUsable(link) {
    return fetch('/v1/sessions/' + link.id + '/stream', {
      method: 'GET', cache: 'no-store', credentials: 'omit', headers: { Authorization: 'Bearer ' + link.token }
    }).then(function (response) {
      if (response.status === 200) return true;
      if (state.link === link) state.link = null;
      halt();
      showLink(response.status === 410
        ? 'This verification link was already used. Return to the app or site that sent you here to start a new check.'
        : 'This verification link has expired or was already used. Return to the app or site that sent you here to start a new check.');
      return false;
    }, function () {
      lost('We could not reach the verification service. Check that you are online, then try again.');
      return false;
    });
  }

  function cancel(message) {
    state.attempt++;
    state.cancelled = true;
    dropStream();
    halt();
    showCancelled(typeof message === 'string' ? message : undefined);
  }

  // A check runs while the page is in front: a tab or app put in front of it stops the camera's
  // frames, and the service would end the session idle without the user knowing why.
  function scanning() { return !$('scan').hidden && !state.verdict && !state.cancelled; }

  function retryConnection() {
    var button = $('connection-again');
    button.disabled = true;
    reachable().then(function (up) {
      button.disabled = false;
      if (up) { start(); return; }
      $('connection-message').textContent = 'We still cannot reach the verification service. Check that you are online, then try again.';
      $('connection-title').focus({ preventScroll: true });
    });
  }

  // ---- Start-up ------------------------------------------------------------------------------

  $('verify').addEventListener('click', start);
  $('close').addEventListener('click', function () { cancel(); });
  document.addEventListener('visibilitychange', function () {
    if (document.hidden && scanning()) {
      cancel('The check stopped because this page went into the background. Nothing was verified and the camera is off.');
    }
  });
  $('result-again').addEventListener('click', start);
  $('cancelled-again').addEventListener('click', start);
  $('permission-again').addEventListener('click', start);
  $('nocamera-again').addEventListener('click', start);
  $('connection-again').addEventListener('click', retryConnection);
  window.addEventListener('offline', function () {
    if (state.ws) {
      var ws = state.ws;
      state.ws = null;
      ws.close();
      lost('Your device went offline. Reconnect, then try again.');
    }
  });
  window.addEventListener('pagehide', function () {
    if (state.ws) state.ws.close(1000, 'page closed');
    halt();
  });

  $('demo-note').hidden = !demo;
  // Without JavaScript the Verify button stays hidden (the page says JavaScript is needed).
  $('verify').hidden = false;

  // The session link: at load, and again when a new link is opened into this tab (only the
  // fragment changes, so the page is not reloaded).
  function acceptLink(atLoad) {
    var fragment = readFragment();
    if (!atLoad && fragment === null) return;
    if (!atLoad) {
      // A new link replaces whatever this tab was doing with the old one.
      state.attempt++;
      state.cancelled = true;
      dropStream();
      halt();
    }
    if (fragment === 'invalid') {
      state.link = null;
      showLink('This verification link is incomplete. Return to the app or site that sent you here to start a new check.');
    } else if (fragment === null && !demo) {
      showLink('This page is opened by the app or site that asks you to verify. Start from there.');
    } else {
      state.link = fragment;
      show('landing');
    }
  }
  window.addEventListener('hashchange', function () { acceptLink(false); });
  acceptLink(true);
})();
