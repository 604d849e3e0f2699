import CLibXML2
import Foundation

/// An HTML page parsed by libxml2's HTML parser, queried with XPath.
final class HTMLDocument {
    private let document: htmlDocPtr

    init(_ bytes: [UInt8]) throws {
        let options = Int32(HTML_PARSE_NOERROR.rawValue | HTML_PARSE_NOWARNING.rawValue | HTML_PARSE_NONET.rawValue)
        let parsed = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                htmlReadMemory($0, Int32(buffer.count), "page.html", "UTF-8", options)
            }
        }
        guard let parsed else { throw ParseFailure() }
        document = parsed
    }

    convenience init(_ text: String) throws { try self.init(Array(text.utf8)) }

    deinit { xmlFreeDoc(document) }

    struct ParseFailure: Error {}

    /// The nodes matching `xpath`, each as its text content and attributes.
    func nodes(_ xpath: String) -> [Node] {
        guard let context = xmlXPathNewContext(document) else { return [] }
        defer { xmlXPathFreeContext(context) }
        guard let result = xmlXPathEvalExpression(xpath, context) else { return [] }
        defer { xmlXPathFreeObject(result) }
        guard let set = result.pointee.nodesetval else { return [] }
        return (0..<Int(set.pointee.nodeNr)).compactMap { set.pointee.nodeTab[$0] }.map(Node.init)
    }

    /// The text of the first node matching `xpath`, whitespace-trimmed.
    func text(_ xpath: String) -> String? { nodes(xpath).first?.text }

    func count(_ xpath: String) -> Int { nodes(xpath).count }

    struct Node {
        let text: String
        let attributes: [String: String]
        let name: String

        init(_ pointer: xmlNodePtr) {
            name = pointer.pointee.name.map { String(cString: $0) } ?? ""
            if let content = xmlNodeGetContent(pointer) {
                text = String(cString: content).trimmingCharacters(in: .whitespacesAndNewlines)
                free(content)
            } else {
                text = ""
            }
            var attributes: [String: String] = [:]
            var attribute = pointer.pointee.properties
            while let current = attribute {
                let key = String(cString: current.pointee.name)
                if let value = xmlNodeGetContent(UnsafeMutableRawPointer(current).assumingMemoryBound(to: xmlNode.self)) {
                    attributes[key] = String(cString: value)
                    free(value)
                }
                attribute = current.pointee.next
            }
            self.attributes = attributes
        }

        subscript(attribute: String) -> String? { attributes[attribute] }
    }
}
