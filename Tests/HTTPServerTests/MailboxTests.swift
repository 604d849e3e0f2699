import Foundation
@testable import HTTPServer
import Synchronization
import Testing

/// The event loop's hand-off from workers (`Mailbox`): nothing lost, nothing twice, each
/// sender's items in the order sent, and a wake asked for whenever the consumer may sleep.
@Suite struct MailboxTests {
    @Test func everyItemArrivesOnceInEachSendersOrder() {
        let mailbox = Mailbox<(sender: Int, index: Int)>()
        let senders = 8, each = 5_000
        let wakes = Atomic<Int>(0)
        let done = Atomic<Int>(0)
        var received: [[Int]] = Array(repeating: [], count: senders)
        var emptyTakes = 0
        let group = DispatchGroup()
        for sender in 0..<senders {
            group.enter()
            Thread.detachNewThread {
                for index in 0..<each where mailbox.push((sender, index)) { wakes.add(1, ordering: .relaxed) }
                done.add(1, ordering: .releasing)
                group.leave()
            }
        }
        // The consumer: takes until every sender is done and the mailbox is empty.
        while true {
            let finished = done.load(ordering: .acquiring) == senders
            let items = mailbox.takeAll()
            if items.isEmpty { emptyTakes += 1 }
            for item in items { received[item.sender].append(item.index) }
            if finished && items.isEmpty { break }
        }
        group.wait()
        for sender in 0..<senders { #expect(received[sender] == Array(0..<each), "sender \(sender)") }
        #expect(wakes.load(ordering: .relaxed) >= 1)
        #expect(mailbox.takeAll().isEmpty)
        // A push onto an empty mailbox asks for a wake; onto a waiting item, not.
        #expect(mailbox.push((0, 0)) == true)
        #expect(mailbox.push((0, 1)) == false)
        #expect(mailbox.takeAll().map(\.index) == [0, 1])
        #expect(mailbox.push((0, 2)) == true)
    }
}
