/// `syncr completions bash|zsh|fish`: completion scripts generated from `ArgumentParser.options`,
/// `CommandName` and the help texts, so they list exactly what the parser accepts.
enum Completions {
    enum Shell: String, CaseIterable { case bash, zsh, fish }

    static let help = """
    Usage: syncr completions bash|zsh|fish

    Prints a completion script for the shell: commands, each command's options, option values
    and file names. To use it:
      bash:  syncr completions bash > ~/.local/share/bash-completion/completions/syncr
      zsh:   syncr completions zsh > "${fpath[1]}/_syncr"   (or: source <(syncr completions zsh))
      fish:  syncr completions fish > ~/.config/fish/completions/syncr.fish
    'make install' installs all three.

    Options:
      -h, --help            Show this help.
    """

    static func shell(_ line: ParsedLine) throws(UsageError) -> Shell {
        let p = line.positionals
        guard p.count == 1, let shell = Shell(rawValue: p[0]) else {
            let given = p.count > 1 ? p[1] : p.first
            throw line.usage(given.map { p.count > 1 ? "Unexpected argument '\($0)'." : "Unknown shell '\($0)': give bash, zsh or fish." }
                                 ?? "'completions' needs a shell: bash, zsh or fish.")
        }
        return shell
    }

    static func run(_ shell: Shell) -> Int32 {
        Output.out(script(for: shell))
        return ExitCode.success
    }

    static func script(for shell: Shell) -> String {
        switch shell {
        case .bash: bash()
        case .zsh: zsh()
        case .fish: fish()
        }
    }

    // MARK: what to complete

    /// What an option's value is. Options not listed take a value nothing can guess (a number).
    enum Value: Equatable { case none, directory, file, choices([String]) }

    static let values: [String: Value] = [
        "--cache": .directory,
        "--report": .file,
        "--junit": .file,
        "--output": .file,
        "--progress": .choices(["auto", "bar", "plain", "none"]),
    ]

    static func value(of option: OptionSpec) -> Value {
        option.takesValue ? values[option.name] ?? .none : .none
    }

    /// What a command's words after the options are.
    enum Positional { case manifest, file, directory, words([String]) }

    static func positionals(_ command: CommandName) -> [Positional] {
        switch command {
        case .validate, .plan, .apply, .lock: [.manifest]
        case .report: [.words(command.subcommands), .file]
        case .cache: [.words(command.subcommands), .manifest]
        case .initialize: [.file]
        case .zip: [.directory, .file]
        case .unzip: [.file, .directory]
        case .help: [.words(CommandName.allCases.map(\.rawValue))]
        case .completions: [.words(Shell.allCases.map(\.rawValue))]
        case .version: []
        }
    }

    static func options(_ command: CommandName) -> [OptionSpec] {
        ArgumentParser.options.filter { $0.commands.contains(command) }
    }

    /// The one-line description of `command` from the overview's command list.
    static func describe(_ command: CommandName) -> String {
        for line in Help.overview.split(separator: "\n") {
            let trimmed = line.drop(while: { $0 == " " })
            guard line.hasPrefix("  "), trimmed.hasPrefix(command.rawValue + " ") || trimmed == command.rawValue else { continue }
            if let gap = trimmed.firstRange(of: "  ") { return String(trimmed[gap.upperBound...].drop(while: { $0 == " " })) }
        }
        return ""
    }

    /// The description of `option` in `command`'s help (the text after the option column, or
    /// the next line when the option's name fills the column).
    static func describe(_ option: OptionSpec, in command: CommandName) -> String {
        let lines = Help.text(for: command).split(separator: "\n", omittingEmptySubsequences: false)
        for (i, line) in lines.enumerated() {
            let trimmed = line.drop(while: { $0 == " " })
            let head = trimmed.hasPrefix("-h, ") ? trimmed.dropFirst(4) : trimmed
            guard head.hasPrefix(option.name + " ") || head == option.name else { continue }
            var text = head.firstRange(of: "  ").map { String(head[$0.upperBound...].drop(while: { $0 == " " })) }
            var next = i + 1
            // Continuation lines sit deeper than the option column.
            while next < lines.count, lines[next].hasPrefix("      "), !lines[next].drop(while: { $0 == " " }).hasPrefix("-") {
                let more = String(lines[next].drop(while: { $0 == " " }))
                text = text.map { $0 + " " + more } ?? more
                next += 1
            }
            return text ?? ""
        }
        return option.name == "--help" ? "Show this help." : ""
    }

    /// `text` inside single quotes, for all three shells.
    static func quoted(_ text: String) -> String {
        "'" + text.replacingAll("'", with: "'\\''") + "'"
    }

    // MARK: bash

    /// The functions the bash script completes with. Candidates are read one per line
    /// (`COMPREPLY=($(compgen -f ...))` split `my file.zip` into `my` and `file.zip`), file
    /// candidates turn on `-o filenames` so that bash quotes them as it inserts them, and the
    /// word typed is dequoted first, so that `my\ f` or `"my f` completes `my file.zip` (compgen
    /// takes the word as it is).
    static let bashHelpers = #"""
    _syncr_dequote() {
        local in=$1 out='' c quote='' i
        for (( i = 0; i < ${#in}; i++ )); do
            c=${in:i:1}
            if [[ $quote == "'" ]]; then
                if [[ $c == "'" ]]; then quote=''; else out+=$c; fi
            elif [[ $c == '\' ]] && (( i + 1 < ${#in} )); then
                (( i++ ))
                c=${in:i:1}
                # Inside double quotes a backslash escapes only $ ` " and itself.
                if [[ $quote == '"' && $c != [\$\`\"\\] ]]; then out+='\'; fi
                out+=$c
            elif [[ $c == '"' ]]; then
                if [[ $quote == '"' ]]; then quote=''; else quote='"'; fi
            elif [[ $c == "'" && -z $quote ]]; then
                quote="'"
            else
                out+=$c
            fi
        done
        REPLY=$out
    }
    _syncr_add() {
        local line
        while IFS= read -r line; do COMPREPLY+=("$line"); done < <(compgen "$@" -- "$cur")
    }
    _syncr_files() { compopt -o filenames 2>/dev/null; _syncr_add -f; }
    _syncr_dirs() { compopt -o filenames 2>/dev/null; _syncr_add -d; }
    _syncr_manifests() { compopt -o filenames 2>/dev/null; _syncr_add -f -X '!*.yml'; _syncr_add -f -X '!*.yaml'; _syncr_add -d; }
    """#

    static func bash() -> String {
        let commands = CommandName.allCases.map(\.rawValue).joined(separator: " ")
        var valueCases: [String] = []
        var plain: [String] = []
        for option in ArgumentParser.options where option.takesValue {
            switch value(of: option) {
            case .directory: valueCases.append("        \(option.name)) _syncr_dirs; return ;;")
            case .file: valueCases.append("        \(option.name)) _syncr_files; return ;;")
            case .choices(let words):
                valueCases.append("        \(option.name)) _syncr_add -W \(quoted(words.joined(separator: " "))); return ;;")
            case .none: plain.append(option.name)
            }
        }
        if !plain.isEmpty { valueCases.append("        \(plain.joined(separator: "|"))) return ;;") }
        var optionCases: [String] = []
        var positionalCases: [String] = []
        for command in CommandName.allCases {
            var names = options(command).map(\.name)
            if names.contains("--help") { names.append("-h") }
            optionCases.append("        \(command.rawValue)) opts=\(quoted(names.joined(separator: " "))) ;;")
            var completions: [String] = []
            for positional in positionals(command) {
                switch positional {
                case .manifest: completions.append("_syncr_manifests")
                case .file: completions.append("_syncr_files")
                case .directory: completions.append("_syncr_dirs")
                case .words(let words): completions.append("_syncr_add -W \(quoted(words.joined(separator: " ")))")
                }
            }
            if !completions.isEmpty {
                positionalCases.append("        \(command.rawValue)) \(completions.joined(separator: "; ")) ;;")
            }
        }
        return """
        # bash completion for syncr; generated by `syncr completions bash`.
        \(bashHelpers)
        _syncr() {
            local cur REPLY prev=${COMP_WORDS[COMP_CWORD-1]} opts=''
            _syncr_dequote "${COMP_WORDS[COMP_CWORD]}"
            cur=$REPLY
            COMPREPLY=()
            if [[ $COMP_CWORD -eq 1 ]]; then
                _syncr_add -W '\(commands) --help --version'
                return
            fi
            case $prev in
        \(valueCases.joined(separator: "\n"))
            esac
            case ${COMP_WORDS[1]} in
        \(optionCases.joined(separator: "\n"))
            esac
            if [[ $cur == -* ]]; then
                _syncr_add -W "$opts"
                return
            fi
            case ${COMP_WORDS[1]} in
        \(positionalCases.joined(separator: "\n"))
            esac
        }
        complete -F _syncr syncr
        """
    }

    // MARK: zsh

    static func zsh() -> String {
        let commands = CommandName.allCases.map { "    " + quoted($0.rawValue + ":" + describe($0)) }
        var cases: [String] = []
        for command in CommandName.allCases {
            var specs: [String] = []
            for option in options(command) {
                // `]` would end the description; a colon inside the brackets is taken literally.
                let text = describe(option, in: command).replacingAll("[", with: "(").replacingAll("]", with: ")")
                let names = option.name == "--help" ? "'(-h --help)'{-h,--help}" : option.name
                var spec = (option.takesValue ? option.name + "=" : "") + "[" + text + "]"
                if option.takesValue {
                    let argument = option.name.dropFirst(2)
                    switch value(of: option) {
                    case .directory: spec += ":\(argument):_files -/"
                    case .file: spec += ":\(argument):_files"
                    case .choices(let words): spec += ":\(argument):(\(words.joined(separator: " ")))"
                    case .none: spec += ":\(argument): "
                    }
                    specs.append(quoted(spec))
                } else if option.name == "--help" {
                    specs.append(names + quoted(spec))
                } else {
                    specs.append(quoted(option.name + spec))
                }
            }
            for (i, positional) in positionals(command).enumerated() {
                let optional = command == .cache || command == .initialize || command == .validate
                    || command == .plan || command == .apply || command == .help
                let position = "\(i + 1):" + (optional ? ":" : "")
                switch positional {
                case .manifest: specs.append(quoted(position + "manifest:_files -g \"*.(yml|yaml)\""))
                case .file: specs.append(quoted(position + "file:_files"))
                case .directory: specs.append(quoted(position + "folder:_files -/"))
                case .words(let words): specs.append(quoted(position + "argument:(\(words.joined(separator: " ")))"))
                }
            }
            cases.append("    (\(command.rawValue))\n      _arguments -s \\\n        "
                + specs.joined(separator: " \\\n        ") + "\n      ;;")
        }
        return """
        #compdef syncr
        # zsh completion for syncr; generated by `syncr completions zsh`.
        _syncr() {
          local -a commands
          commands=(
        \(commands.joined(separator: "\n"))
          )
          if (( CURRENT == 2 )); then
            _describe -t commands 'syncr command' commands
            return
          fi
          local command=${words[2]}
          shift words
          (( CURRENT-- ))
          case $command in
        \(cases.joined(separator: "\n"))
          esac
        }
        if [[ ${zsh_eval_context[-1]} == loadautofunc ]]; then
          _syncr "$@"
        else
          compdef _syncr syncr
        fi
        """
    }

    // MARK: fish

    static func fish() -> String {
        var lines = [
            "# fish completion for syncr; generated by `syncr completions fish`.",
            "complete -c syncr -f",
            "complete -c syncr -n __fish_use_subcommand -s h -l help -d 'Show help.'",
            "complete -c syncr -n __fish_use_subcommand -s V -l version -d 'Show the version.'",
        ]
        for command in CommandName.allCases {
            lines.append("complete -c syncr -n __fish_use_subcommand -a \(command.rawValue) -d \(quoted(describe(command)))")
        }
        for command in CommandName.allCases {
            let condition = quoted("__fish_seen_subcommand_from \(command.rawValue)")
            for option in options(command) {
                var line = "complete -c syncr -n \(condition)"
                line += option.name == "--help" ? " -s h -l help" : " -l \(option.name.dropFirst(2))"
                if option.takesValue {
                    switch value(of: option) {
                    case .directory: line += " -x -a '(__fish_complete_directories)'"
                    case .file: line += " -r -F"
                    case .choices(let words): line += " -x -a \(quoted(words.joined(separator: " ")))"
                    case .none: line += " -x"
                    }
                }
                lines.append(line + " -d \(quoted(describe(option, in: command)))")
            }
            for positional in positionals(command) {
                switch positional {
                case .manifest, .file: lines.append("complete -c syncr -n \(condition) -F")
                case .directory: lines.append("complete -c syncr -n \(condition) -a '(__fish_complete_directories)'")
                case .words(let words): lines.append("complete -c syncr -n \(condition) -a \(quoted(words.joined(separator: " ")))")
                }
            }
        }
        return lines.joined(separator: "\n")
    }
}

extension String {
    /// Every occurrence of `target` replaced (Foundation-free).
    func replacingAll(_ target: String, with replacement: String) -> String {
        guard !target.isEmpty else { return self }
        var result = ""
        var rest = self[...]
        while let range = rest.firstRange(of: target) {
            result += rest[..<range.lowerBound] + replacement
            rest = rest[range.upperBound...]
        }
        return result + rest
    }
}
