/// A wrong command line: the message says what and the command's usage follows it.
import LivenessKit
public struct UsageError: Error, CustomStringConvertible, Sendable {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// One option of a command: a flag (`--json`) or an option with a value (`--output FILE`).
public struct OptionSpec: Sendable {
    /// The long name with its dashes, e.g. `--format`.
    public var name: String
    /// The value's placeholder (`FILE`), or nil for a flag.
    public var value: String?
    /// One line of help.
    public var help: String
    /// May be given several times (values accumulate).
    public var repeatable = false

    public static func flag(_ name: String, _ help: String) -> OptionSpec { OptionSpec(name: name, value: nil, help: help) }
    public static func option(_ name: String, _ value: String, _ help: String, repeatable: Bool = false) -> OptionSpec {
        OptionSpec(name: name, value: value, help: help, repeatable: repeatable)
    }
}

/// A subcommand's interface, in the shape of swift-argument-parser: OVERVIEW, USAGE,
/// ARGUMENTS and OPTIONS sections in its help.
public struct CommandSpec: Sendable {
    public var name: String
    public var overview: String
    public var usage: String
    public var arguments: [(name: String, help: String)]
    public var options: [OptionSpec]
    /// Smallest and largest number of positional arguments.
    public var positionalCount: ClosedRange<Int>

    /// The help text.
    public var help: String {
        var text = "OVERVIEW: \(overview)\n\nUSAGE: liveness \(name) \(usage)\n"
        if !arguments.isEmpty {
            text += "\nARGUMENTS:\n"
            for a in arguments { text += "  " + pad(a.name, 26) + a.help + "\n" }
        }
        text += "\nOPTIONS:\n"
        for o in options + [.flag("--help", "Show help information.")] {
            text += "  " + pad(o.name + (o.value.map { " <\($0.lowercased())>" } ?? ""), 26) + o.help + "\n"
        }
        return text
    }

    private func pad(_ s: String, _ width: Int) -> String {
        s.count >= width ? s + "\n" + String(repeating: " ", count: width + 2) : s + String(repeating: " ", count: width - s.count)
    }

    /// Parses `arguments` (without the command name). `--name=value` and `--name value` both work;
    /// `--` ends the options.
    public func parse(_ arguments: [String]) throws(UsageError) -> ParsedArguments {
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
                throw UsageError("unknown option '\(name)' for 'liveness \(self.name)'")
            }
            if spec.value == nil {
                if inline != nil { throw UsageError("option '\(name)' takes no value") }
                parsed.flags.insert(name)
                continue
            }
            let value: String
            if let inline {
                value = inline
            } else {
                guard index < arguments.count else { throw UsageError("option '\(name)' needs a value <\(spec.value!.lowercased())>") }
                value = arguments[index]
                index += 1
            }
            if !spec.repeatable, parsed.values[name] != nil { throw UsageError("option '\(name)' given twice") }
            parsed.values[name, default: []].append(value)
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
public struct ParsedArguments: Sendable {
    public var positionals: [String] = []
    public var values: [String: [String]] = [:]
    public var flags: Set<String> = []
    public var help = false

    /// The last value of an option.
    public func value(_ name: String) -> String? { values[name]?.last }
    public func has(_ flag: String) -> Bool { flags.contains(flag) }

    /// An option's value as an integer in `range`.
    public func integer(_ name: String, in range: ClosedRange<Int>) throws(UsageError) -> Int? {
        guard let text = value(name) else { return nil }
        guard let number = Int(text), range.contains(number) else {
            throw UsageError("option '\(name)' needs an integer in \(range.lowerBound)...\(range.upperBound), not '\(text)'")
        }
        return number
    }
}
