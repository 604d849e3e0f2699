import Foundation
import Glibc
import HTTPTestSupport

/// A listening TCP socket on 127.0.0.1 at a free port: what a test puts in a peer's place.
func loopbackListener() throws -> (fd: Int32, port: Int) {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 64) == 0
            && getsockname(fd, $0, &length) == 0 }
    }
    guard fd >= 0, bound else { throw TestClientError("cannot listen") }
    return (fd, Int(UInt16(bigEndian: address.sin_port)))
}
