import Synchronization

/// Items handed to one consumer thread by any number of others, without a lock (a sender that
/// found one held spun while its holder waited for the core): a sender pushes onto a linked stack
/// with one compare-and-swap; the consumer takes it all with one exchange, oldest first. Only
/// pushes and taking everything: no single pop, so no ABA.
final class Mailbox<Item>: @unchecked Sendable {
    // Safe to share: `top` is the only shared state, and a node belongs to one thread at a time.
    private final class Node {
        let item: Item
        var below: UInt = 0
        init(_ item: Item) { self.item = item }
    }

    private let top = Atomic<UInt>(0) // the newest node's address (a retained `Node`), or 0

    /// Adds `item`; true when the mailbox was empty (the consumer may be asleep: wake it).
    func push(_ item: Item) -> Bool {
        let node = Unmanaged.passRetained(Node(item))
        let address = UInt(bitPattern: node.toOpaque())
        var below = top.load(ordering: .relaxed)
        while true {
            node.takeUnretainedValue().below = below
            let (exchanged, found) = top.compareExchange(expected: below, desired: address, ordering: .releasing)
            if exchanged { return below == 0 }
            below = found
        }
    }

    /// Everything pushed so far, oldest first; the mailbox is empty after.
    func takeAll() -> [Item] {
        var address = top.exchange(0, ordering: .acquiring)
        var items: [Item] = []
        while address != 0 {
            let node = Unmanaged<Node>.fromOpaque(UnsafeRawPointer(bitPattern: address)!).takeRetainedValue()
            items.append(node.item)
            address = node.below
        }
        items.reverse()
        return items
    }

    deinit { _ = takeAll() }
}
