/// A map that keeps at most `maximumCount` entries and at most `maximumCost` in total (each entry
/// says what it costs, e.g. its size in bytes), forgetting the least recently used first.
/// Reads and writes are O(1): the entries form a doubly linked list, newest first, threaded
/// through one array by index. Not thread-safe: its owner holds its own lock.
struct LRUCache<Key: Hashable, Value> {
    private struct Entry {
        var key: Key
        /// Nil once the entry is forgotten, so that its slot does not keep the value alive.
        var value: Value?
        var cost: Int
        var newer: Int?
        var older: Int?
    }

    let maximumCount: Int
    let maximumCost: Int
    private var entries: [Entry] = []
    private var unusedSlots: [Int] = []
    private var slots: [Key: Int] = [:]
    private var newest: Int?
    private var oldest: Int?
    private(set) var totalCost = 0

    init(maximumCount: Int, maximumCost: Int) {
        self.maximumCount = max(1, maximumCount)
        self.maximumCost = max(1, maximumCost)
    }

    var count: Int { slots.count }

    /// The value for `key`, which becomes the most recently used.
    mutating func value(for key: Key) -> Value? {
        guard let slot = slots[key] else { return nil }
        moveToFront(slot)
        return entries[slot].value
    }

    /// The value for `key` without marking it used.
    func peek(_ key: Key) -> Value? {
        slots[key].flatMap { entries[$0].value }
    }

    /// Stores `value` as the most recently used, then forgets the least recently used entries
    /// until both limits hold. An entry costing more than `maximumCost` is not kept at all.
    mutating func set(_ value: Value, for key: Key, cost: Int) {
        removeValue(for: key)
        guard cost <= maximumCost else { return }
        let entry = Entry(key: key, value: value, cost: cost, newer: nil, older: newest)
        let slot: Int
        if let reused = unusedSlots.popLast() {
            entries[reused] = entry
            slot = reused
        } else {
            entries.append(entry)
            slot = entries.count - 1
        }
        if let previous = newest { entries[previous].newer = slot }
        newest = slot
        if oldest == nil { oldest = slot }
        slots[key] = slot
        totalCost += cost
        while slots.count > maximumCount || totalCost > maximumCost, let last = oldest {
            removeValue(for: entries[last].key)
        }
    }

    mutating func removeValue(for key: Key) {
        guard let slot = slots.removeValue(forKey: key) else { return }
        unlink(slot)
        totalCost -= entries[slot].cost
        entries[slot].value = nil
        unusedSlots.append(slot)
    }

    mutating func removeAll() {
        self = LRUCache(maximumCount: maximumCount, maximumCost: maximumCost)
    }

    private mutating func moveToFront(_ slot: Int) {
        guard newest != slot else { return }
        unlink(slot)
        entries[slot].older = newest
        entries[slot].newer = nil
        if let previous = newest { entries[previous].newer = slot }
        newest = slot
        if oldest == nil { oldest = slot }
    }

    private mutating func unlink(_ slot: Int) {
        let (newer, older) = (entries[slot].newer, entries[slot].older)
        if let newer { entries[newer].older = older } else { newest = older }
        if let older { entries[older].newer = newer } else { oldest = newer }
        entries[slot].newer = nil
        entries[slot].older = nil
    }
}
