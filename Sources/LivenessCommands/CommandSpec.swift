/// A wrong command line: the message says what and the command's usage follows it.
import LivenessKit
package struct UsageError: Error, CustomStringConvertible, Sendable {
    package var message: String
    package init(_ message: String) { self.message = message }
    package var description: String { message }
}

/// One option of a command: a flag (`--json`) or an option with a value (`--output FILE`).
package struct OptionSpec: Sendable {
    /// The long name with its dashes, e.g. `--format`.
    package var name: String
    /// The value's placeholder (`FILE`), or nil for a flag.
    package var value: String?
    /// One line of help.
    package var help: String
    /// May be given several times (values accumulate).
    package var repeatable = false
    /// Must be given (shown without brackets in the usage line).
    package var required = false
    /// The value may be left out (`--scale` alone or `--scale 720`): the next argument is its
    /// value unless it begins with a dash or there is none; left out, the value is "".
    package var valueIsOptional = false
    /// Options that go together (`--tls-cert` with `--tls-key`) share a group name and are
    /// shown in one bracket of the usage line; they must be next to each other in the list.
    package var group: String?

    package static func flag(_ name: String, _ help: String) -> OptionSpec { OptionSpec(name: name, value: nil, help: help) }
    package static func option(_ name: String, _ value: String, _ help: String, repeatable: Bool = false,
                              required: Bool = false, group: String? = nil) -> OptionSpec {
        OptionSpec(name: name, value: value, help: help, repeatable: repeatable, required: required, group: group)
    }
    /// An option whose value may be left out (see `valueIsOptional`).
    package static func optionalValue(_ name: String, _ value: String, _ help: String) -> OptionSpec {
        OptionSpec(name: name, value: value, help: help, valueIsOptional: true)
    }

    /// The option as written on a command line: `--output <dir>`, `--format csv|jsonl` (a value
    /// of lowercase literal choices is shown as they are), `--json`.
    package var synopsis: String {
        guard let value else { return name }
        let literal = value.contains("|") && value.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "|" || $0 == "-" }
        let shown = literal ? value : "<\(value.lowercased())>"
        return name + " " + (valueIsOptional ? "[\(shown)]" : shown)
    }
}

/// A subcommand's interface, in the shape of swift-argument-parser: OVERVIEW, USAGE,
/// ARGUMENTS and OPTIONS sections in its help.
package struct CommandSpec: Sendable {
    /// The subcommand (`analyze`), or "" for a program without subcommands.
    package var name: String
    package var overview: String
    package var arguments: [(name: String, help: String)]
    package var options: [OptionSpec]
    /// Smallest and largest number of positional arguments.
    package var positionalCount: ClosedRange<Int>
    /// The executable's name.
    package var program = "liveness"
    /// One line for the list of subcommands in `liveness --help`.
    package var summary: String

    package init(name: String, overview: String, summary: String? = nil, arguments: [(name: String, help: String)],
                options: [OptionSpec], positionalCount: ClosedRange<Int>, program: String = "liveness") {
        self.name = name
        self.overview = overview
        self.summary = summary ?? overview
        self.arguments = arguments
        self.options = options
        self.positionalCount = positionalCount
        self.program = program
    }

    /// What is typed before the arguments: `liveness analyze`.
    package var commandLine: String { name.isEmpty ? program : "\(program) \(name)" }

    /// The usage line after the command, made from the arguments and options: positional
    /// arguments first (in brackets when none is required), then every option in its order,
    /// in brackets unless required, `...` after a repeatable one.
    package var usage: String {
        var words: [String] = []
        let positionals = arguments.map(\.name).joined(separator: " ")
        if !positionals.isEmpty { words.append(positionalCount.lowerBound == 0 ? "[\(positionals)]" : positionals) }
        var index = 0
        while index < options.count {
            var run = [options[index]]
            if let group = options[index].group {
                while index + run.count < options.count, options[index + run.count].group == group { run.append(options[index + run.count]) }
            }
            index += run.count
            let text = run.map(\.synopsis).joined(separator: " ")
            words.append((run.allSatisfy(\.required) ? text : "[\(text)]") + (run.contains(where: \.repeatable) ? "..." : ""))
        }
        return words.joined(separator: " ")
    }

    /// The help text.
    package var help: String {
        var text = "OVERVIEW: \(overview)\n\nUSAGE: \(commandLine) \(usage)\n"
        if !arguments.isEmpty {
            text += "\nARGUMENTS:\n"
            for a in arguments { text += "  " + pad(a.name, 26) + a.help + "\n" }
        }
        text += "\nOPTIONS:\n"
        for o in options + [.flag("--help", "Show help information.")] {
            text += "  " + pad(o.synopsis, 26) + o.help + "\n"
        }
        return text
    }

    private func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s + "\n" + String(repeating: " ", count: width + 2) : s + String(repeating: " ", count: width - s.count)
    }

    /// Parses `arguments` (without the command name). `--name=value` and `--name value` both work;
    /// `--` ends the options.
    package func parse(_ arguments: [String]) throws(UsageError) -> ParsedArguments {
        var parsed = ParsedArguments()
        var index = 0
        var optionsEnded = false
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if optionsEnded || !argument.hasPrefix("-") || argument == "-" {
                parsed.positionals.append(argument)
                continue
            }
            if argument == "--" {
                optionsEnded = true
                continue
            }
            if argument == "--help" || argument == "-h" {
                parsed.help = true
                continue
            }
            var name = argument
            var inline: String?
            if let equals = argument.firstIndex(of: "=") {
                name = String(argument[..<equals])
                inline = String(argument[argument.index(after: equals)...])
            }
            guard let spec = options.first(where: { $0.name == name }) else {
                throw UsageError("unknown option '\(name)' for '\(commandLine)'")
            }
            if spec.value == nil {
                if inline != nil { throw UsageError("option '\(name)' takes no value") }
                parsed.flags.insert(name)
                continue
            }
            let value: String
            if let inline {
                value = inline
            } else if spec.valueIsOptional, index >= arguments.count || arguments[index].hasPrefix("-") {
                value = ""
            } else {
                guard index < arguments.count else { throw UsageError("option '\(name)' needs a value <\(spec.value!.lowercased())>") }
                value = arguments[index]
                index += 1
            }
            if !spec.repeatable, parsed.values[name] != nil { throw UsageError("option '\(name)' given twice") }
            parsed.values[name, default: []].append(value)
        }
        if !parsed.help, let missing = options.first(where: { $0.required && parsed.values[$0.name] == nil && !parsed.flags.contains($0.name) }) {
            throw UsageError("\(missing.synopsis) is required")
        }
        if !parsed.help && !positionalCount.contains(parsed.positionals.count) {
            if parsed.positionals.count < positionalCount.lowerBound {
                throw UsageError("missing argument: \(arguments.isEmpty ? "expected " : "")\(self.arguments.first?.name ?? "input")")
            }
            throw UsageError("too many arguments: \(parsed.positionals.dropFirst(positionalCount.upperBound).joined(separator: " "))")
        }
        return parsed
    }
}

extension CommandSpec {
    /// Parses a command's arguments the way every subcommand starts: on `--help` prints the help
    /// and returns nil with exit code 0; on a usage error prints it with the usage line and
    /// returns nil with exit code 2.
    func begin(_ arguments: [String], console: Console) -> (parsed: ParsedArguments?, exitCode: Int32) {
        do {
            let parsed = try parse(arguments)
            if parsed.help {
                console.out(help)
                return (nil, 0)
            }
            return (parsed, 0)
        } catch {
            return (nil, console.usageError(error, spec: self))
        }
    }
}

/// The result of parsing a command line.
package struct ParsedArguments: Sendable {
    package var positionals: [String] = []
    package var values: [String: [String]] = [:]
    package var flags: Set<String> = []
    package var help = false

    /// The last value of an option.
    package func value(_ name: String) -> String? { values[name]?.last }
    package func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// An option's value as an integer in `range`.
    /// A seed: any unsigned 64-bit integer, the range of the seeds the service draws and writes
    /// into its reports (so that `analyze --seed` can rerun any session's report).
    package func seed(_ name: String) throws(UsageError) -> UInt64? {
        guard let text = value(name) else { return nil }
        guard let number = UInt64(text) else {
            throw UsageError("option '\(name)' needs an integer in 0...\(UInt64.max), not '\(text)'")
        }
        return number
    }

    package func integer(_ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("option '\(name)' needs an integer in \(range.lowerBound)...\(range.upperBound), not '\(text)'")
        }
        return number
    }
}
