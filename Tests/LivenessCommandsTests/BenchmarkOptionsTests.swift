import LivenessCommands
import XCTest

/// liveness-bench's command line: every argument is used or refused, never ignored.
final class BenchmarkOptionsTests: XCTestCase {
    private func parse(_ arguments: [String]) throws -> BenchmarkOptions { try XCTUnwrap(try BenchmarkOptions.parse(arguments)) }

    func testNoModeRunsScaleAndStream() throws {
        let options = try parse([])
        XCTAssertEqual(options.scaleSizes, [480, 720, 1080])
        XCTAssertTrue(options.stream)
        XCTAssertNil(options.pipelineVideo)
    }

    func testAPositionalVideoIsThePipelinesClipAndNothingElseRuns() throws {
        let options = try parse(["clip.mp4"])
        XCTAssertEqual(options.pipelineVideo, "clip.mp4")
        XCTAssertNil(options.scaleSizes)
        XCTAssertFalse(options.stream)
        XCTAssertEqual(try parse(["--pipeline", "clip.mp4", "--repeat", "4"]).pipelineVideo, "clip.mp4")
        XCTAssertEqual(try parse(["--pipeline", "clip.mp4", "--repeat", "4"]).repeats, 4)
        XCTAssertEqual(try parse(["--pipeline"]).pipelineVideo, BenchmarkOptions.defaultPipelineVideo)
        XCTAssertThrowsError(try BenchmarkOptions.parse(["a.mp4", "--pipeline", "b.mp4"]))
        XCTAssertThrowsError(try BenchmarkOptions.parse(["a.mp4", "b.mp4"]))
    }

    func testScaleTakesItsSizesOrTheDefaults() throws {
        XCTAssertEqual(try parse(["--scale"]).scaleSizes, [480, 720, 1080])
        XCTAssertEqual(try parse(["--scale", "720", "--rounds", "5"]).scaleSizes, [720])
        XCTAssertEqual(try parse(["--scale", "720", "--rounds", "5"]).rounds, 5)
        XCTAssertEqual(try parse(["--scale=480,1080"]).scaleSizes, [480, 1080])
        XCTAssertFalse(try parse(["--scale", "720"]).stream)
        for wrong in [["--scale", "720,"], ["--scale", "abc"], ["--scale", "99999"], ["--rounds", "0"], ["--rounds", "x"],
                      ["--stream", "--seconds", "0"], ["--stream", "--sessions", "-1"], ["--scale", "--unknown"],
                      ["--scale", "720", "--sessions", "3"], ["--stream", "--repeat", "2"]] {
            XCTAssertThrowsError(try BenchmarkOptions.parse(wrong), "\(wrong)")
        }
    }

    func testTheStreamingBenchmarkTakesAStoreFolder() throws {
        XCTAssertEqual(try parse(["--stream", "--data-dir", "/tmp/store"]).storeDirectory, "/tmp/store")
        XCTAssertNil(try parse(["--stream"]).storeDirectory)
        XCTAssertThrowsError(try BenchmarkOptions.parse(["--scale", "720", "--data-dir", "/tmp/store"]), "a store for --scale")
    }

    func testTheStreamingBenchmarkTakesAPostgreSQLStore() throws {
        let url = "postgresql:///bench?host=/tmp/pg"
        let options = try parse(["--stream", "--store", url])
        XCTAssertEqual(options.storeURL, url)
        XCTAssertNil(options.storeDirectory)
        XCTAssertNil(try parse(["--stream"]).storeURL)
        XCTAssertThrowsError(try BenchmarkOptions.parse(["--stream", "--store", url, "--data-dir", "/tmp/store"]), "two stores")
        XCTAssertThrowsError(try BenchmarkOptions.parse(["--scale", "720", "--store", url]), "a store for --scale")
    }

    func testHelpIsNotARun() throws {
        XCTAssertNil(try BenchmarkOptions.parse(["--help"]))
    }
}
