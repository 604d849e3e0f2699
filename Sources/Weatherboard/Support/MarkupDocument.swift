import CLibXML2
import Foundation

/// An HTML or XML document parsed by libxml2 and queried with XPath: the KMA provider reads
/// its XML with it, and tests read pages and feeds. Never fetches anything from the network.
public final class MarkupDocument {
    private let document: xmlDocPtr

    public enum Kind { case html, xml }

    public struct ParseFailure: Error {}

    public init(_ bytes: [UInt8], as kind: Kind = .html) throws {
        guard !bytes.isEmpty else { throw ParseFailure() }
        let parsed: xmlDocPtr? = bytes.withUnsafeBufferPointer { buffer -> xmlDocPtr? in
            guard let base = buffer.baseAddress else { return nil }
            return base.withMemoryRebound(to: CChar.self, capacity: buffer.count) { pointer -> xmlDocPtr? in
                switch kind {
                case .html:
                    let options = Int32(HTML_PARSE_NOERROR.rawValue | HTML_PARSE_NOWARNING.rawValue | HTML_PARSE_NONET.rawValue)
                    return htmlReadMemory(pointer, Int32(buffer.count), "page.html", "UTF-8", options)
                case .xml:
                    let options = Int32(XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue | XML_PARSE_NONET.rawValue)
                    return xmlReadMemory(pointer, Int32(buffer.count), "document.xml", nil, options)
                }
            }
        }
        guard let parsed else { throw ParseFailure() }
        document = parsed
    }

    public convenience init(_ text: String, as kind: Kind = .html) throws { try self.init(Array(text.utf8), as: kind) }

    deinit { xmlFreeDoc(document) }

    /// The nodes matching `xpath`, each as its text content and attributes.
    public func nodes(_ xpath: String) -> [Node] {
        guard let context = xmlXPathNewContext(document) else { return [] }
        defer { xmlXPathFreeContext(context) }
        guard let result = xmlXPathEvalExpression(xpath, context) else { return [] }
        defer { xmlXPathFreeObject(result) }
        guard let set = result.pointee.nodesetval else { return [] }
        return (0..<Int(set.pointee.nodeNr)).compactMap { set.pointee.nodeTab[$0] }.map(Node.init)
    }

    /// The text of the first node matching `xpath`, whitespace-trimmed.
    public func text(_ xpath: String) -> String? { nodes(xpath).first?.text }

    public func count(_ xpath: String) -> Int { nodes(xpath).count }

    public struct Node {
        public let text: String
        public let attributes: [String: String]
        public let name: String

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

        public subscript(attribute: String) -> String? { attributes[attribute] }
    }
}
