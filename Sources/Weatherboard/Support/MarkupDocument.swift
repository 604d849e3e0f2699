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
        // XML with a document type is refused: its entities are words the source did not write
        // where they are read (libxml2 bounds how far they grow; nothing we read declares any).
        if kind == .xml && parsed.pointee.intSubset != nil {
            xmlFreeDoc(parsed)
            throw ParseFailure()
        }
        document = parsed
    }

    public convenience init(_ text: String, as kind: Kind = .html) throws { try self.init(Array(text.utf8), as: kind) }

    deinit { xmlFreeDoc(document) }

    /// The nodes matching `xpath`, each as its text content and attributes.
    public func nodes(_ xpath: String) -> [Node] { matching(xpath).map { Node($0) } }

    /// The nodes `xpath` selects, valid while the document lives.
    private func matching(_ xpath: String) -> [xmlNodePtr] {
        guard let context = xmlXPathNewContext(document) else { return [] }
        defer { xmlXPathFreeContext(context) }
        guard let result = xmlXPathEvalExpression(xpath, context) else { return [] }
        defer { xmlXPathFreeObject(result) }
        guard let set = result.pointee.nodesetval else { return [] }
        return (0..<Int(set.pointee.nodeNr)).compactMap { set.pointee.nodeTab[$0] }
    }

    /// The elements matching `xpath`, each copied out with everything under it: a feed's entries
    /// are then read field by field without an XPath query per field (each scans the document).
    public func elements(_ xpath: String) -> [Element] {
        matching(xpath).filter { $0.pointee.type == XML_ELEMENT_NODE }.map { Element($0) }
    }

    /// An element by its local name (no prefix: `cap:event` and `event` read alike), its
    /// attributes, its child elements and, when it has none, its text.
    public struct Element: Sendable {
        public let name: String
        public let attributes: [String: String]
        /// Whitespace-trimmed; empty for an element with child elements (a container's text
        /// would copy its whole subtree once per level).
        public let text: String
        public let children: [Element]

        init(_ pointer: xmlNodePtr) {
            let node = Node(pointer, withText: false)
            name = node.name
            attributes = node.attributes
            var children: [Element] = []
            var child = pointer.pointee.children
            while let current = child {
                if current.pointee.type == XML_ELEMENT_NODE { children.append(Element(current)) }
                child = current.pointee.next
            }
            self.children = children
            text = children.isEmpty ? Node(pointer).text : ""
        }

        public subscript(attribute: String) -> String? { attributes[attribute] }
        /// The first child element called `name`.
        public func child(_ name: String) -> Element? { children.first { $0.name == name } }
        /// Every child element called `name`.
        public func all(_ name: String) -> [Element] { children.filter { $0.name == name } }
        /// The text of the first child element called `name`, nil when there is none or it is empty.
        public func value(_ name: String) -> String? { child(name).flatMap { $0.text.isEmpty ? nil : $0.text } }
    }

    /// The text of the first node matching `xpath`, whitespace-trimmed.
    public func text(_ xpath: String) -> String? { nodes(xpath).first?.text }

    public func count(_ xpath: String) -> Int { nodes(xpath).count }

    public struct Node {
        public let text: String
        public let attributes: [String: String]
        public let name: String

        init(_ pointer: xmlNodePtr, withText: Bool = true) {
            name = pointer.pointee.name.map { String(cString: $0) } ?? ""
            if withText, let content = xmlNodeGetContent(pointer) {
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
