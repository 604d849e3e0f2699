import Foundation
import HTTPTestSupport
import Testing

/// The build-time template compiler: a template mistake is a build error that names the file and
/// line, and what compiles is plain appends of typed values.
@Suite struct TemplateCompilerTests {
    /// The compiler the build ran, next to the test bundle.
    static var compiler: URL? {
        let folder = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        return ["TemplateCompiler", "TemplateCompiler-tool"].map { folder.appendingPathComponent($0) }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Compiles one template (with a one-key catalog) and returns the exit status, output and errors.
    func compile(_ template: String) throws -> (status: Int32, swift: String, errors: String) {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("compile-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("strings"), withIntermediateDirectories: true)
        try #"{"greeting": "Hello & welcome"}"#.write(to: folder.appendingPathComponent("strings/en.json"), atomically: true, encoding: .utf8)
        try template.write(to: folder.appendingPathComponent("page.mustache"), atomically: true, encoding: .utf8)
        let output = folder.appendingPathComponent("Templates.swift")
        let compiler: URL = try #require(Self.compiler, "TemplateCompiler was not built beside the tests")
        // Its errors go to a file through the shell (see `ChildProcess` for why no Pipe).
        let errors = folder.appendingPathComponent("errors.txt").path
        let status = try ChildProcess(["/bin/sh", "-c", "exec \"$0\" \"$@\" 2>\"\(errors)\"", compiler.path, folder.path, output.path]).wait()
        let errorText = (try? String(contentsOfFile: errors, encoding: .utf8)) ?? ""
        return (status, (try? String(contentsOf: output, encoding: .utf8)) ?? "", errorText)
    }

    @Test func typedValuesAreAppendedAndStandaloneLinesVanish() throws {
        let result = try compile("{{! view: Greeting }}\n<h1>{{t.greeting}} {{name}}</h1>\n{{#people}}\n<li>{{name}} {{page.title}}</li>\n{{/people}}\n")
        #expect(result.status == 0, "\(result.errors)")
        #expect(result.swift.contains("static func page(_ page: Greeting, _ o: inout HTML, _ t: Strings)"))
        #expect(result.swift.contains("o.raw(t[.`greeting`])"))
        #expect(result.swift.contains("o.text(page.name)"))
        #expect(result.swift.contains("for s1 in Section.items(page.people, parent: page)"))
        #expect(result.swift.contains("o.text(s1.name)"))
        #expect(result.swift.contains("o.text(page.title)"))
        #expect(result.swift.contains(#"o.raw("<li>")"#), "the section's standalone lines leave no blank lines")
    }

    @Test func mistakesAreErrorsWithFileAndLine() throws {
        let cases: [(String, String)] = [
            ("{{! view: V }}\n{{#open}}\nnever closed\n", "is never closed"),
            ("{{! view: V }}\n{{#a}}{{/b}}", "closes"),
            ("{{! view: V }}\n<p>{{t.missing_key}}</p>", "no string 'missing_key'"),
            ("{{! view: V }}\n<p>{{{raw}}}</p>", "unescaped output is not allowed"),
            ("{{! view: V }}\n<p>{{&raw}}</p>", "unescaped output is not allowed"),
            ("<p>{{name}}</p>", "must start with {{! view: TypeName }}"),
            ("{{! view: V }}\n{{> nowhere}}", "no template named 'nowhere'"),
            ("{{! view: V }}\n{{a-b}}", "is not a name"),
        ]
        for (template, message) in cases {
            let result = try compile(template)
            #expect(result.status != 0, "\(template) compiled")
            #expect(result.errors.contains(message), "\(template): \(result.errors)")
            #expect(result.errors.contains("page.mustache:"), "the error names the template file")
        }
    }
}
