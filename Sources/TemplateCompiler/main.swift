import Foundation

// Compiles the Mustache templates in a directory into one Swift file: a function per template
// that appends the page's bytes to an `HTML` buffer, reading typed view values directly.
//
// The dialect is Mustache's syntax with static scoping, so the Swift compiler can check every name:
// - `{{! view: TypeName }}` names the template's view type (required, before anything else);
// - `{{name}}`, `{{a.b}}` read the innermost scope: the view, or the element of the enclosing list
//   or optional view; `{{.}}` is the innermost scope itself; `{{page.name}}` reads the template's view;
// - `{{#name}}…{{/name}}` shows its content for `true`, a present value, a non-empty string, or once
//   per element of a collection (lists and optional views become the new scope; flags and optional
//   plain values keep the scope); `{{^name}}` is the inverse;
// - `{{t.key}}` is the page language's string (a key missing from `strings/en.json` is an error);
// - `{{> name}}` renders another template with the innermost scope as its view;
// - `{{<parent}}{{$block}}…{{/block}}{{/parent}}` fills the parent's blocks; its view is the
//   scope's property named after it (`{{<layout}}` renders `layout(page.layout, …)`);
// - every `{{…}}` is HTML-escaped; `{{{…}}}` and `{{&…}}` are refused.

struct TemplateError: Error, CustomStringConvertible {
    let file: String
    let line: Int
    let column: Int
    let message: String
    var description: String { "\(file):\(line):\(column): error: \(message)" }
}

enum TagKind {
    case variable, section, inverted, close, partial, parent, block, comment

    /// Tags that vanish with their line when they stand alone on it (Mustache's "standalone" rule).
    var canStandAlone: Bool { self != .variable }
}

struct Tag {
    var kind: TagKind
    var name: String
    var start: Int
    var end: Int
}

indirect enum Node {
    case text(String)
    case variable(String, at: Int)
    case section(String, inverted: Bool, children: [Node], at: Int)
    case partial(String, at: Int)
    case parent(String, blocks: [(String, [Node])], at: Int)
    case block(String, children: [Node], at: Int)
    case comment(String)
}

struct Template {
    let name: String
    let file: String
    let source: [UInt8]
    var viewType = ""
    var nodes: [Node] = []

    init(name: String, file: String, source: [UInt8]) {
        self.name = name
        self.file = file
        self.source = source
    }

    func error(_ message: String, at offset: Int) -> TemplateError {
        var line = 1, column = 1
        for byte in source[..<min(offset, source.count)] {
            if byte == 0x0A { line += 1; column = 1 } else { column += 1 }
        }
        return TemplateError(file: file, line: line, column: column, message: message)
    }

    /// Finds every tag with its byte range.
    func scanTags() throws -> [Tag] {
        var tags: [Tag] = []
        var i = 0
        let open: [UInt8] = [0x7B, 0x7B], close: [UInt8] = [0x7D, 0x7D]
        func matches(_ pattern: [UInt8], at index: Int) -> Bool {
            index + pattern.count <= source.count && Array(source[index..<index + pattern.count]) == pattern
        }
        while i < source.count {
            guard matches(open, at: i) else { i += 1; continue }
            let start = i
            var j = i + 2
            while j < source.count && !matches(close, at: j) { j += 1 }
            guard j < source.count else { throw error("unclosed tag", at: start) }
            var content = String(decoding: source[(i + 2)..<j], as: UTF8.self).trimmingCharacters(in: .whitespaces)
            let end = j + 2
            guard let sigil = content.first else { throw error("empty tag", at: start) }
            let kind: TagKind
            switch sigil {
            case "#": kind = .section
            case "^": kind = .inverted
            case "/": kind = .close
            case ">": kind = .partial
            case "<": kind = .parent
            case "$": kind = .block
            case "!": kind = .comment
            case "{", "&": throw error("unescaped output is not allowed: every value is HTML-escaped", at: start)
            case "=": throw error("changing delimiters is not supported", at: start)
            default: kind = .variable
            }
            if kind != .variable {
                content.removeFirst()
                content = content.trimmingCharacters(in: .whitespaces)
            }
            tags.append(Tag(kind: kind, name: content, start: start, end: end))
            i = end
        }
        return tags
    }

    /// Turns the tags and the text between them into a tree, dropping standalone tag lines.
    mutating func parse() throws {
        let tags = try scanTags()
        func isBlank(_ range: Range<Int>) -> Bool { source[range].allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D } }
        var cursor = 0
        var stack: [(tag: Tag, children: [Node])] = [(Tag(kind: .section, name: "", start: 0, end: 0), [])]
        for tag in tags {
            var cut = tag.start, resume = tag.end
            if tag.kind.canStandAlone {
                var lineStart = tag.start
                while lineStart > 0 && source[lineStart - 1] != 0x0A { lineStart -= 1 }
                var lineEnd = tag.end
                while lineEnd < source.count && source[lineEnd] != 0x0A { lineEnd += 1 }
                if lineStart >= cursor && isBlank(lineStart..<tag.start) && isBlank(tag.end..<lineEnd) {
                    cut = lineStart
                    resume = min(lineEnd + 1, source.count)
                }
            }
            if cut > cursor { stack[stack.count - 1].children.append(.text(String(decoding: source[cursor..<cut], as: UTF8.self))) }
            cursor = resume
            switch tag.kind {
            case .variable:
                stack[stack.count - 1].children.append(.variable(tag.name, at: tag.start))
            case .comment:
                stack[stack.count - 1].children.append(.comment(tag.name))
            case .partial:
                stack[stack.count - 1].children.append(.partial(tag.name, at: tag.start))
            case .section, .inverted, .parent, .block:
                stack.append((tag, []))
            case .close:
                guard stack.count > 1 else { throw error("{{/\(tag.name)}} closes nothing", at: tag.start) }
                let (opening, children) = stack.removeLast()
                guard opening.name == tag.name else {
                    throw error("{{/\(tag.name)}} closes {{\(opening.name)}} opened at \(error("", at: opening.start).line)", at: tag.start)
                }
                let node: Node
                switch opening.kind {
                case .section: node = .section(opening.name, inverted: false, children: children, at: opening.start)
                case .inverted: node = .section(opening.name, inverted: true, children: children, at: opening.start)
                case .block: node = .block(opening.name, children: children, at: opening.start)
                default:
                    let blocks = children.compactMap { child -> (String, [Node])? in
                        if case .block(let name, let content, _) = child { return (name, content) }
                        return nil
                    }
                    node = .parent(opening.name, blocks: blocks, at: opening.start)
                }
                stack[stack.count - 1].children.append(node)
            }
        }
        if let open = stack.last, stack.count > 1 { throw error("{{\(open.tag.name)}} is never closed", at: open.tag.start) }
        if cursor < source.count { stack[0].children.append(.text(String(decoding: source[cursor...], as: UTF8.self))) }
        nodes = stack[0].children
        for node in nodes {
            if case .comment(let text) = node, text.hasPrefix("view:") {
                viewType = text.dropFirst(5).trimmingCharacters(in: .whitespaces)
                break
            }
        }
        guard isIdentifier(viewType) else { throw error("the template must start with {{! view: TypeName }}", at: 0) }
    }

    /// The blocks a parent template declares, in order.
    var declaredBlocks: [String] {
        var names: [String] = []
        func visit(_ nodes: [Node]) {
            for node in nodes {
                switch node {
                case .block(let name, let children, _):
                    if !names.contains(name) { names.append(name) }
                    visit(children)
                case .section(_, _, let children, _): visit(children)
                default: break
                }
            }
        }
        visit(nodes)
        return names
    }
}

func isIdentifier(_ text: String) -> Bool {
    guard let first = text.unicodeScalars.first, first == "_" || (first.isASCII && CharacterSet.letters.contains(first)) else { return false }
    return text.unicodeScalars.allSatisfy { $0 == "_" || ($0.isASCII && CharacterSet.alphanumerics.contains($0)) }
}

/// Writes the Swift source for all templates.
struct Generator {
    let templates: [String: Template]
    let stringKeys: Set<String>
    var output = ""

    final class Scope {
        let name: String
        var used = false
        init(_ name: String) { self.name = name }
    }

    mutating func line(_ text: String, _ depth: Int) {
        output += String(repeating: "    ", count: depth) + text + "\n"
    }

    /// Points the Swift compiler's diagnostics for the next statement at the template's line.
    mutating func locate(_ template: Template, _ offset: Int) {
        output += "#sourceLocation(file: \(swiftLiteral(template.file)), line: \(template.error("", at: offset).line))\n"
    }

    /// The Swift expression for a name in the template.
    func expression(_ name: String, scopes: [Scope], in template: Template, at offset: Int) throws -> String {
        if name == "." {
            scopes[scopes.count - 1].used = true
            return scopes[scopes.count - 1].name
        }
        let components = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard components.allSatisfy(isIdentifier) else { throw template.error("'\(name)' is not a name", at: offset) }
        if components[0] == "page" { return (["page"] + components.dropFirst()).joined(separator: ".") }
        if components[0] == "t" { throw template.error("strings ({{t.…}}) can only be shown, not used as sections", at: offset) }
        scopes[scopes.count - 1].used = true
        return ([scopes[scopes.count - 1].name] + components).joined(separator: ".")
    }

    mutating func emit(_ nodes: [Node], scopes: [Scope], in template: Template, depth: Int) throws {
        var pendingText = ""
        func flush(_ generator: inout Generator) {
            guard !pendingText.isEmpty else { return }
            generator.line("o.raw(\(swiftLiteral(pendingText)))", depth)
            pendingText = ""
        }
        for node in nodes {
            switch node {
            case .text(let text):
                pendingText += text
            case .comment:
                continue
            case .variable(let name, let offset):
                flush(&self)
                locate(template, offset)
                if name.hasPrefix("t.") {
                    let key = String(name.dropFirst(2))
                    guard stringKeys.contains(key) else {
                        throw template.error("no string '\(key)' in strings/en.json", at: offset)
                    }
                    line("o.raw(t[.`\(key)`])", depth)
                } else {
                    line("o.text(\(try expression(name, scopes: scopes, in: template, at: offset)))", depth)
                }
            case .section(let name, let inverted, let children, let offset):
                flush(&self)
                locate(template, offset)
                let value = try expression(name, scopes: scopes, in: template, at: offset)
                if inverted {
                    line("if Section.isEmpty(\(value)) {", depth)
                    try emit(children, scopes: scopes, in: template, depth: depth + 1)
                    line("}", depth)
                } else {
                    let scope = Scope("s\(scopes.count)")
                    var body = Generator(templates: templates, stringKeys: stringKeys)
                    try body.emit(children, scopes: scopes + [scope], in: template, depth: depth + 1)
                    line("for \(scope.used ? scope.name : "_") in Section.items(\(value), parent: \(scopes[scopes.count - 1].name)) {", depth)
                    scopes[scopes.count - 1].used = true
                    output += body.output
                    line("}", depth)
                }
            case .partial(let name, let offset):
                flush(&self)
                guard templates[name] != nil else { throw template.error("no template named '\(name)'", at: offset) }
                scopes[scopes.count - 1].used = true
                line("Templates.\(name)(\(scopes[scopes.count - 1].name), &o, t)", depth)
            case .parent(let name, let blocks, let offset):
                flush(&self)
                guard let parent = templates[name] else { throw template.error("no template named '\(name)'", at: offset) }
                let declared = parent.declaredBlocks
                for (block, _) in blocks where !declared.contains(block) {
                    throw template.error("template '\(name)' has no block '\(block)'", at: offset)
                }
                scopes[scopes.count - 1].used = true
                line("Templates.\(name)(\(scopes[scopes.count - 1].name).\(name), &o, t,", depth)
                let filled = declared.compactMap { block in blocks.first { $0.0 == block } }
                for (index, (block, content)) in filled.enumerated() {
                    line("\(block): { (o: inout HTML) in", depth + 1)
                    try emit(content, scopes: scopes, in: template, depth: depth + 2)
                    line("}" + (index == filled.count - 1 ? "" : ","), depth + 1)
                }
                if filled.isEmpty { output.removeLast(2); output += "\n" }
                line(")", depth)
            case .block(let name, let children, _):
                flush(&self)
                line("if let \(name) { \(name)(&o) } else {", depth)
                try emit(children, scopes: scopes, in: template, depth: depth + 1)
                line("}", depth)
            }
        }
        flush(&self)
    }

    mutating func generate(stringKeyList: [String]) throws {
        output += "// Generated by TemplateCompiler from Templates/*.mustache and Templates/strings/en.json. Do not edit.\n\n"
        output += "/// Keys of the string catalogs, checked at build time against the templates that use them.\n"
        output += "enum StringKey: Int, CaseIterable {\n"
        for key in stringKeyList { output += "    case `\(key)`\n" }
        output += "\n    static let names: [String] = [\n"
        for key in stringKeyList { output += "        \(swiftLiteral(key)),\n" }
        output += "    ]\n}\n\n"
        output += "/// One function per template: appends the rendered bytes to `o`.\nenum Templates {\n"
        for (name, template) in templates.sorted(by: { $0.key < $1.key }) {
            let blocks = template.declaredBlocks
            let blockParameters = blocks.map { ", \($0): ((inout HTML) -> Void)? = nil" }.joined()
            line("static func \(name)(_ page: \(template.viewType), _ o: inout HTML, _ t: Strings\(blockParameters)) {", 1)
            try emit(template.nodes, scopes: [Scope("page")], in: template, depth: 2)
            output += "#sourceLocation()\n"
            line("}", 1)
            output += "\n"
        }
        output += "}\n"
    }
}

/// A Swift string literal for `text`.
func swiftLiteral(_ text: String) -> String {
    var literal = "\""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\\": literal += "\\\\"
        case "\"": literal += "\\\""
        case "\n": literal += "\\n"
        case "\t": literal += "\\t"
        case "\r": literal += "\\r"
        default:
            if scalar.value < 0x20 || scalar.value == 0x7F {
                literal += "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                literal.unicodeScalars.append(scalar)
            }
        }
    }
    return literal + "\""
}

func run() throws {
    let arguments = CommandLine.arguments
    guard arguments.count == 3 else {
        FileHandle.standardError.write(Data("usage: TemplateCompiler TEMPLATES_DIRECTORY OUTPUT.swift\n".utf8))
        exit(2)
    }
    let directory = URL(fileURLWithPath: arguments[1])
    let catalogURL = directory.appendingPathComponent("strings/en.json")
    guard let catalog = try JSONSerialization.jsonObject(with: Data(contentsOf: catalogURL)) as? [String: String] else {
        throw TemplateError(file: catalogURL.path, line: 1, column: 1, message: "not a JSON object of strings")
    }
    for key in catalog.keys where !isIdentifier(key) {
        throw TemplateError(file: catalogURL.path, line: 1, column: 1, message: "string key '\(key)' is not an identifier")
    }
    var templates: [String: Template] = [:]
    for file in try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted() where file.hasSuffix(".mustache") {
        let url = directory.appendingPathComponent(file)
        let name = String(file.dropLast(".mustache".count))
        var template = Template(name: name, file: url.path, source: Array(try Data(contentsOf: url)))
        guard isIdentifier(name) else { throw template.error("a template's file name must be an identifier", at: 0) }
        try template.parse()
        templates[name] = template
    }
    var generator = Generator(templates: templates, stringKeys: Set(catalog.keys))
    try generator.generate(stringKeyList: catalog.keys.sorted())
    let output = URL(fileURLWithPath: arguments[2])
    // Unchanged output keeps the file's date, so the module is not rebuilt for nothing.
    if let existing = try? String(contentsOf: output, encoding: .utf8), existing == generator.output { return }
    try generator.output.write(to: output, atomically: true, encoding: .utf8)
}

do {
    try run()
} catch {
    FileHandle.standardError.write(Data("\(error)\n".utf8))
    exit(1)
}
