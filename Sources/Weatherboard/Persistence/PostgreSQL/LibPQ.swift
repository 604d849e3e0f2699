import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// libpq, PostgreSQL's own C client, loaded with `dlopen` the first time a PostgreSQL URL is
/// given. Why libpq and why loaded: it is synchronous like GRDB, so our worker threads call it
/// directly (postgres-nio is async and would need a bridge per query, plus SwiftNIO in the
/// build); and loading it at run time means a machine without `libpq-dev` (or even `libpq5`)
/// builds and runs the SQLite default unchanged. Only the dozen functions we call are declared.
struct LibPQ: @unchecked Sendable { // function pointers into a library that is never unloaded
    typealias Connection = OpaquePointer
    typealias Result = OpaquePointer

    let connectdb: @convention(c) (UnsafePointer<CChar>) -> Connection?
    let status: @convention(c) (Connection?) -> Int32
    let errorMessage: @convention(c) (Connection?) -> UnsafePointer<CChar>?
    let finish: @convention(c) (Connection?) -> Void
    let exec: @convention(c) (Connection?, UnsafePointer<CChar>) -> Result?
    let prepare: @convention(c) (Connection?, UnsafePointer<CChar>, UnsafePointer<CChar>, Int32, UnsafePointer<UInt32>?) -> Result?
    let execPrepared: @convention(c) (Connection?, UnsafePointer<CChar>, Int32, UnsafePointer<UnsafePointer<CChar>?>?,
                                      UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32) -> Result?
    let execParams: @convention(c) (Connection?, UnsafePointer<CChar>, Int32, UnsafePointer<UInt32>?,
                                    UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32) -> Result?
    let resultStatus: @convention(c) (Result?) -> Int32
    let resultErrorField: @convention(c) (Result?, Int32) -> UnsafePointer<CChar>?
    let resultErrorMessage: @convention(c) (Result?) -> UnsafePointer<CChar>?
    let ntuples: @convention(c) (Result?) -> Int32
    let getvalue: @convention(c) (Result?, Int32, Int32) -> UnsafePointer<CChar>?
    let getisnull: @convention(c) (Result?, Int32, Int32) -> Int32
    let getlength: @convention(c) (Result?, Int32, Int32) -> Int32
    let cmdTuples: @convention(c) (Result?) -> UnsafePointer<CChar>?
    let clear: @convention(c) (Result?) -> Void
    let consumeInput: @convention(c) (Connection?) -> Int32
    let notifies: @convention(c) (Connection?) -> UnsafeMutableRawPointer?
    let freemem: @convention(c) (UnsafeMutableRawPointer?) -> Void
    let socket: @convention(c) (Connection?) -> Int32
    let transactionStatus: @convention(c) (Connection?) -> Int32
    // The asynchronous calls, so that every wait has a deadline of our own (a frozen server
    // enforces none of its timeouts, and the kernel still acknowledges its packets).
    let sendQuery: @convention(c) (Connection?, UnsafePointer<CChar>) -> Int32
    let sendPrepare: @convention(c) (Connection?, UnsafePointer<CChar>, UnsafePointer<CChar>, Int32, UnsafePointer<UInt32>?) -> Int32
    let sendQueryPrepared: @convention(c) (Connection?, UnsafePointer<CChar>, Int32, UnsafePointer<UnsafePointer<CChar>?>?,
                                           UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32) -> Int32
    let isBusy: @convention(c) (Connection?) -> Int32
    let getResult: @convention(c) (Connection?) -> Result?

    /// `struct pgNotify` from libpq-fe.h: `char *relname; int be_pid; char *extra; …`.
    static func notification(_ notify: UnsafeMutableRawPointer) -> (channel: String, payload: String) {
        let pointer = MemoryLayout<UnsafeMutablePointer<CChar>?>.stride
        let channel = notify.load(fromByteOffset: 0, as: UnsafeMutablePointer<CChar>?.self)
        let payload = notify.load(fromByteOffset: 2 * pointer, as: UnsafeMutablePointer<CChar>?.self) // after be_pid and padding
        return (channel.map { String(cString: $0) } ?? "", payload.map { String(cString: $0) } ?? "")
    }

    static let connectionOK: Int32 = 0
    static let commandOK: Int32 = 1
    static let tuplesOK: Int32 = 2
    /// PQTRANS_IDLE: no transaction open.
    static let transactionIdle: Int32 = 0
    static let diagnosticSQLState = Int32(UInt8(ascii: "C"))

    /// The library, or why it could not be loaded.
    static let shared: Swift.Result<LibPQ, SQLError> = load()

    private static func load() -> Swift.Result<LibPQ, SQLError> {
        var handle: UnsafeMutableRawPointer?
        for name in ["libpq.so.5", "libpq.so", "libpq.5.dylib", "libpq.dylib"] {
            handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)
            if handle != nil { break }
        }
        guard let handle else {
            return .failure(SQLError(.other, "PostgreSQL needs libpq (Debian: apt-get install libpq5); it could not be loaded"))
        }
        var missing: [String] = []
        func symbol<F>(_ name: String, _: F.Type) -> F {
            guard let pointer = dlsym(handle, name) else {
                missing.append(name)
                return unsafeBitCast(dlsym(handle, "PQfinish"), to: F.self)
            }
            return unsafeBitCast(pointer, to: F.self)
        }
        let library = LibPQ(
            connectdb: symbol("PQconnectdb", (@convention(c) (UnsafePointer<CChar>) -> Connection?).self),
            status: symbol("PQstatus", (@convention(c) (Connection?) -> Int32).self),
            errorMessage: symbol("PQerrorMessage", (@convention(c) (Connection?) -> UnsafePointer<CChar>?).self),
            finish: symbol("PQfinish", (@convention(c) (Connection?) -> Void).self),
            exec: symbol("PQexec", (@convention(c) (Connection?, UnsafePointer<CChar>) -> Result?).self),
            prepare: symbol("PQprepare", (@convention(c) (Connection?, UnsafePointer<CChar>, UnsafePointer<CChar>, Int32,
                                                          UnsafePointer<UInt32>?) -> Result?).self),
            execPrepared: symbol("PQexecPrepared", (@convention(c) (Connection?, UnsafePointer<CChar>, Int32,
                                                                    UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
                                                                    UnsafePointer<Int32>?, Int32) -> Result?).self),
            execParams: symbol("PQexecParams", (@convention(c) (Connection?, UnsafePointer<CChar>, Int32, UnsafePointer<UInt32>?,
                                                                UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
                                                                UnsafePointer<Int32>?, Int32) -> Result?).self),
            resultStatus: symbol("PQresultStatus", (@convention(c) (Result?) -> Int32).self),
            resultErrorField: symbol("PQresultErrorField", (@convention(c) (Result?, Int32) -> UnsafePointer<CChar>?).self),
            resultErrorMessage: symbol("PQresultErrorMessage", (@convention(c) (Result?) -> UnsafePointer<CChar>?).self),
            ntuples: symbol("PQntuples", (@convention(c) (Result?) -> Int32).self),
            getvalue: symbol("PQgetvalue", (@convention(c) (Result?, Int32, Int32) -> UnsafePointer<CChar>?).self),
            getisnull: symbol("PQgetisnull", (@convention(c) (Result?, Int32, Int32) -> Int32).self),
            getlength: symbol("PQgetlength", (@convention(c) (Result?, Int32, Int32) -> Int32).self),
            cmdTuples: symbol("PQcmdTuples", (@convention(c) (Result?) -> UnsafePointer<CChar>?).self),
            clear: symbol("PQclear", (@convention(c) (Result?) -> Void).self),
            consumeInput: symbol("PQconsumeInput", (@convention(c) (Connection?) -> Int32).self),
            notifies: symbol("PQnotifies", (@convention(c) (Connection?) -> UnsafeMutableRawPointer?).self),
            freemem: symbol("PQfreemem", (@convention(c) (UnsafeMutableRawPointer?) -> Void).self),
            socket: symbol("PQsocket", (@convention(c) (Connection?) -> Int32).self),
            transactionStatus: symbol("PQtransactionStatus", (@convention(c) (Connection?) -> Int32).self),
            sendQuery: symbol("PQsendQuery", (@convention(c) (Connection?, UnsafePointer<CChar>) -> Int32).self),
            sendPrepare: symbol("PQsendPrepare", (@convention(c) (Connection?, UnsafePointer<CChar>, UnsafePointer<CChar>, Int32,
                                                                  UnsafePointer<UInt32>?) -> Int32).self),
            sendQueryPrepared: symbol("PQsendQueryPrepared", (@convention(c) (Connection?, UnsafePointer<CChar>, Int32,
                                                                              UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?,
                                                                              UnsafePointer<Int32>?, Int32) -> Int32).self),
            isBusy: symbol("PQisBusy", (@convention(c) (Connection?) -> Int32).self),
            getResult: symbol("PQgetResult", (@convention(c) (Connection?) -> Result?).self))
        guard missing.isEmpty else {
            return .failure(SQLError(.other, "the libpq found lacks \(missing.joined(separator: ", "))"))
        }
        return .success(library)
    }
}
