#!/usr/bin/env python3
"""The hostile-input corpus: files made to hurt the engine, run through `liveness analyze` and
`liveness trace` one process per input, with a time limit and a peak-memory limit each.

    Tools/hostile_corpus.py --engine .build/debug/liveness            # make and run (CI)
    Tools/hostile_corpus.py --engine .build/release/liveness --keep /tmp/hostile

Every case must end with a clear error (exit 2, one `error:` line on standard error, and for
`analyze` a report with verdict `invalidInput` and its `error`) or a verdict (exit 0 or 1 with a
report); never a signal, a hang past the time limit, memory past the limit, or a line on
standard error that is not the engine's (`error:` / `warning:`). The cases are made from the
project's own sample (Recordings/.cache/astronaut-still.mp4 and astronaut.png, made by
Tools/setup.sh) with ffmpeg and Python's standard library; seeded, so the corpus is the same on
every run. Exit 0 when every case behaved, 1 otherwise; the table printed gives each case's
outcome, wall time and peak memory, and the worst of each.
"""
import argparse
import concurrent.futures
import json
import os
import random
import shutil
import stat
import struct
import subprocess
import sys
import tempfile
import time
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIME_LIMIT_S = 60
MEMORY_LIMIT_KB = 1024 * 1024  # 1 GiB of peak RSS per input


def ffmpeg(*args):
    subprocess.run(["ffmpeg", "-v", "error", "-y", *args], check=True)


def png_bomb(path, width, height):
    """A PNG whose header declares width x height 1-bit pixels, all zero: a few hundred kB."""
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
    row = b"\x00" * (1 + (width + 7) // 8)
    z = zlib.compressobj(9)
    body = b"".join(z.compress(row) for _ in range(height)) + z.flush()
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0))
                + chunk(b"IDAT", body) + chunk(b"IEND", b""))


def flip_bytes(source, path, rate, seed, start=0):
    data = bytearray(open(source, "rb").read())
    rng = random.Random(seed)
    count = max(1, int((len(data) - start) * rate))
    for _ in range(count):
        i = rng.randrange(start, len(data))
        data[i] ^= 1 << rng.randrange(8)
    open(path, "wb").write(bytes(data))


def make_corpus(out, sample, photo):
    """Writes the corpus into `out`; returns the case file names."""
    os.makedirs(out, exist_ok=True)
    p = lambda name: os.path.join(out, name)
    # The base of the damaged cases: the sample with changing frames (temporal noise) and a
    # keyframe every 12 frames, so that a cut or a flipped byte leaves decodable frames around it;
    # once with the index (moov) at the end, as ffmpeg writes it, once at the start.
    ffmpeg("-i", sample, "-vf", "noise=alls=12:allf=t", "-g", "12", "-c:v", "libx264", "-preset", "ultrafast",
           "-pix_fmt", "yuv420p", p("base.mp4"))
    ffmpeg("-i", p("base.mp4"), "-c", "copy", "-movflags", "+faststart", p("faststart.mp4"))
    whole = open(p("base.mp4"), "rb").read()
    fast = open(p("faststart.mp4"), "rb").read()
    base = p("base.mp4")
    os.remove(p("faststart.mp4"))
    # Truncations at many offsets, of both layouts.
    for fraction in (0.0005, 0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99):
        for name, data in (("moov-last", whole), ("moov-first", fast)):
            open(p("truncated-%s-%04d.mp4" % (name, int(fraction * 10000))), "wb").write(data[:max(1, int(len(data) * fraction))])
    for size in (1, 8, 64, 512):
        open(p("truncated-head-%d.mp4" % size), "wb").write(fast[:size])
    # Flipped bytes, in the whole file and in the header only.
    for rate, seed in ((1e-5, 1), (1e-4, 2), (1e-3, 3), (1e-2, 4)):
        flip_bytes(base, p("flipped-%g.mp4" % rate), rate, seed, start=len(whole) // 20)
    head = bytearray(fast)
    rng = random.Random(6)
    for _ in range(40):
        head[rng.randrange(0, min(4000, len(head)))] ^= 0xFF
    open(p("flipped-header.mp4"), "wb").write(bytes(head))
    # Wrong extensions and non-media.
    shutil.copy(photo, p("photo-named.mp4"))
    shutil.copy(sample, p("video-named.png"))
    open(p("text-named.mp4"), "w").write("this is not a video\n" * 500)
    open(p("json-named.mov"), "w").write(json.dumps({"frames": [1, 2, 3]}))
    open(p("empty.mp4"), "wb").close()
    open(p("zeros.mp4"), "wb").write(b"\x00" * 100000)
    open(p("random.mkv"), "wb").write(random.Random(7).randbytes(200000))
    os.makedirs(p("folder-named.mp4"), exist_ok=True)
    open(p("folder-named.mp4/readme.txt"), "w").write("a folder, not a video\n")
    os.mkfifo(p("fifo.mp4"))
    os.symlink("loop.mp4", p("loop.mp4"))
    os.symlink("/nonexistent/target.mp4", p("dangling.mp4"))
    # Huge dimensions: frames above the 50-megapixel limit, a PNG bomb, a large JPEG.
    ffmpeg("-f", "lavfi", "-i", "color=c=gray:s=8192x8192:r=1", "-frames:v", "2", "-c:v", "libx264", "-preset",
           "ultrafast", p("huge-8192.mp4"))
    png_bomb(p("bomb-30000.png"), 30000, 30000)
    png_bomb(p("bomb-16000.png"), 16000, 16000)
    ffmpeg("-f", "lavfi", "-i", "color=c=gray:s=9000x6000", "-frames:v", "1", p("large-54mp.jpg"))
    # A container that declares 64x64 while three of its MJPEG pictures are 16000x16000: each
    # must be refused from its header, not decoded first (issue 27; it peaked at 937 MB).
    pictures = p("mjpeg-pictures")
    os.makedirs(pictures)
    ffmpeg("-f", "lavfi", "-i", "color=c=gray:s=64x64", "-frames:v", "1", os.path.join(pictures, "small.jpg"))
    ffmpeg("-f", "lavfi", "-i", "color=c=gray:s=16000x16000", "-frames:v", "1", os.path.join(pictures, "big.jpg"))
    for i in range(12):
        shutil.copy(os.path.join(pictures, "big.jpg" if i in (5, 6, 7) else "small.jpg"), os.path.join(pictures, "f%02d.jpg" % i))
    ffmpeg("-framerate", "25", "-i", os.path.join(pictures, "f%02d.jpg"), "-c:v", "copy", p("mjpeg-16000-in-64.mkv"))
    shutil.rmtree(pictures)
    # Absurd frame rates and timestamps.
    ffmpeg("-f", "lavfi", "-i", "testsrc=size=320x240:rate=1000", "-t", "3", "-c:v", "libx264", "-preset", "ultrafast",
           p("rate-1000fps.mp4"))
    ffmpeg("-i", sample, "-c", "copy", "-bsf:v", "setts=ts=N", "-video_track_timescale", "1000000", p("rate-1us-apart.mp4"))
    ffmpeg("-i", sample, "-c", "copy", "-bsf:v", "setts=ts=0", p("timestamps-zero.mkv"))
    ffmpeg("-i", sample, "-c", "copy", "-bsf:v", "h264_mp4toannexb", p("timestamps-none.h264"))
    ffmpeg("-i", sample, "-c", "copy", "-bsf:v", "setts=ts=if(lt(N\\,50)\\,N*40\\,(100-N)*40)", "-video_track_timescale",
           "1000", p("timestamps-backwards.mkv"))
    ffmpeg("-i", sample, "-c", "copy", "-bsf:v", "setts=ts=N*40+if(gt(N\\,30)\\,1000000000\\,0)", "-video_track_timescale",
           "1000", p("timestamps-jump.mkv"))
    # No video: audio only, under video names.
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=2", "-c:a", "aac", p("audio-only.mp4"))
    ffmpeg("-f", "lavfi", "-i", "sine=frequency=440:duration=2", p("audio-only.wav"))
    shutil.copy(p("audio-only.wav"), p("audio-named.mov"))
    # Odd but valid: a one-frame video, a tiny frame, an odd-sized frame, a gray still.
    ffmpeg("-i", sample, "-frames:v", "1", "-c:v", "libx264", "-preset", "ultrafast", p("one-frame.mp4"))
    ffmpeg("-f", "lavfi", "-i", "testsrc=size=16x16:rate=25", "-t", "1", "-c:v", "libx264", "-preset", "ultrafast", p("tiny-16px.mp4"))
    ffmpeg("-i", sample, "-vf", "scale=333:211", "-c:v", "mpeg4", p("odd-size.avi"))
    ffmpeg("-i", photo, "-pix_fmt", "gray", p("gray.png"))
    # Names that break naive code: a newline, quotes, a very long name.
    os.remove(base)
    shutil.copy(sample, p("name with\nnewline.mp4"))
    shutil.copy(sample, p('name "quoted" $HOME.mp4'))
    shutil.copy(sample, p("n" * 240 + ".mp4"))
    return sorted(os.listdir(out))


def run_case(engine, corpus, name, work, command):
    """Runs one command over one input; returns a dict describing what happened."""
    path = os.path.join(corpus, name)
    outdir = os.path.join(work, command, str(abs(hash(name))))
    os.makedirs(outdir, exist_ok=True)
    if command == "analyze":
        args = [engine, "analyze", path, "--output", outdir]
    else:
        args = [engine, "trace", path, "--output", os.path.join(outdir, "trace.csv")]
    timing = os.path.join(outdir, "time.txt")
    started = time.monotonic()
    try:
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", timing, "timeout", "-s", "KILL", str(TIME_LIMIT_S)] + args,
                              capture_output=True, timeout=TIME_LIMIT_S + 30)
        status, stderr = proc.returncode, proc.stderr.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        status, stderr = -9, ""
    wall = time.monotonic() - started
    try:
        peak_kb = int(open(timing).read().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        peak_kb = -1
    problems = []
    lines = [line for line in stderr.splitlines() if line]
    if status in (124, 137, -9) or wall > TIME_LIMIT_S:
        problems.append("did not finish within %d s" % TIME_LIMIT_S)
    elif status not in (0, 1, 2):
        problems.append("exit status %d (a crash or a signal)" % status)
    if peak_kb > MEMORY_LIMIT_KB:
        problems.append("peak memory %d MB above %d MB" % (peak_kb // 1024, MEMORY_LIMIT_KB // 1024))
    noise = [line for line in lines if not line.startswith(("error:", "warning:", "usage:", "(see"))]
    if noise:
        problems.append("lines on standard error that are not the engine's: %r" % noise[:2])
    outcome = {0: "verdict", 1: "verdict", 2: "error"}.get(status, "crash")
    if status == 2 and not any(line.startswith("error:") for line in lines):
        problems.append("exit 2 without an error line")
    if command == "analyze" and status in (0, 1, 2):
        reports = [os.path.join(d, "report.json") for d, _, files in os.walk(outdir) if "report.json" in files]
        if not reports:
            # A folder given as an input is expanded; one without media is an error of its own.
            if not (status == 2 and ("usage:" in stderr or "no video or image files in this folder" in stderr)):
                problems.append("no report.json recorded")
        else:
            report = json.load(open(reports[0]))
            reason = report["verdict"]["reason"]
            if status == 2 and (reason != "invalidInput" or not report.get("error")):
                problems.append("exit 2 but the report says %s without an error" % reason)
            if status in (0, 1) and reason == "invalidInput":
                problems.append("a verdict exit with an invalidInput report")
    if command == "trace" and status == 0 and not os.path.exists(os.path.join(outdir, "trace.csv")):
        problems.append("exit 0 without a trace")
    first_error = next((line for line in lines if line.startswith("error:")), "")
    return {"case": name, "command": command, "status": status, "outcome": outcome, "wall": wall, "peak_kb": peak_kb,
            "problems": problems, "message": first_error[:110]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", default=os.path.join(ROOT, ".build/debug/liveness"))
    parser.add_argument("--sample", default=os.path.join(ROOT, "Recordings/.cache/astronaut-still.mp4"))
    parser.add_argument("--photo", default=os.path.join(ROOT, "Recordings/.cache/astronaut.png"))
    parser.add_argument("--keep", help="keep the corpus and outputs in this folder")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", help="run only the cases whose name contains this")
    args = parser.parse_args()
    for needed in (args.engine, args.sample, args.photo):
        if not os.path.exists(needed):
            print("hostile_corpus: %s is missing (build the engine and run Tools/setup.sh)" % needed, file=sys.stderr)
            return 2
    base = args.keep or tempfile.mkdtemp(prefix="liveness-hostile-")
    if args.keep and os.path.exists(base):
        shutil.rmtree(base)
    corpus = os.path.join(base, "corpus")
    made = time.monotonic()
    names = make_corpus(corpus, args.sample, args.photo)
    if args.only:
        names = [n for n in names if args.only in n]
    print("hostile corpus: %d inputs made in %.1f s; each through analyze and trace (limits: %d s, %d MB)"
          % (len(names), time.monotonic() - made, TIME_LIMIT_S, MEMORY_LIMIT_KB // 1024))
    jobs = [(name, command) for name in names for command in ("analyze", "trace")]
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda job: run_case(args.engine, corpus, job[0], base, job[1]), jobs))
    failures = 0
    for r in results:
        mark = "ok" if not r["problems"] else "FAIL"
        failures += bool(r["problems"])
        name = r["case"].replace("\n", "\\n")
        if len(name) > 38:
            name = name[:35] + "..."
        print("%-4s %-38s %-7s %-7s %6.2f s %5d MB  %s" % (mark, name, r["command"], r["outcome"], r["wall"],
                                                      r["peak_kb"] // 1024, "; ".join(r["problems"]) or r["message"]))
    worst_time = max(results, key=lambda r: r["wall"])
    worst_memory = max(results, key=lambda r: r["peak_kb"])
    print("worst time: %.2f s (%s, %s); worst peak memory: %d MB (%s, %s)" % (
        worst_time["wall"], worst_time["case"].replace("\n", "\\n")[:40], worst_time["command"],
        worst_memory["peak_kb"] // 1024, worst_memory["case"].replace("\n", "\\n")[:40], worst_memory["command"]))
    counts = {}
    for r in results:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    print("%d runs over %d inputs: %s; %d misbehaved" % (len(results), len(names),
          ", ".join("%d %s" % (v, k) for k, v in sorted(counts.items())), failures))
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
