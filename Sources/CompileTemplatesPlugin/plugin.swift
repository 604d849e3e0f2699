import Foundation
import PackagePlugin

/// Compiles `Templates/*.mustache` and the string catalog's keys into Swift before the target
/// that uses them is built, so that a template error (an unclosed section, an unknown string key,
/// a name its view type lacks) is a build error instead of a page that renders wrong.
@main
struct CompileTemplatesPlugin: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let templates = context.package.directoryURL.appending(path: "Templates")
        let names = try FileManager.default.contentsOfDirectory(atPath: templates.path())
            .filter { $0.hasSuffix(".mustache") }
            .sorted()
        let inputs = names.map { templates.appending(path: $0) } + [templates.appending(path: "strings/en.json")]
        let output = context.pluginWorkDirectoryURL.appending(path: "Templates.swift")
        return [
            .buildCommand(
                displayName: "Compiling \(names.count) templates",
                executable: try context.tool(named: "TemplateCompiler").url,
                arguments: [templates.path(), output.path()],
                inputFiles: inputs,
                outputFiles: [output]
            ),
        ]
    }
}
