// A model of the AuthenticationServices API the adapters use, declared as the iOS 18 SDK documents it.
// `ASWebAuthenticationSession` here shows nothing: a test finishes a started session with a URL or an
// error (`complete(callbackURL:error:)`, a model-only hook), as the real one does when the user finishes
// or cancels. Each declaration names its page
// (https://developer.apple.com/documentation/authenticationservices/...).
public import Foundation
public import UIKit

// https://developer.apple.com/documentation/authenticationservices/aspresentationanchor
public typealias ASPresentationAnchor = UIWindow

// https://developer.apple.com/documentation/authenticationservices/aswebauthenticationpresentationcontextproviding
// (@MainActor from the iOS 18 SDK on)
@MainActor public protocol ASWebAuthenticationPresentationContextProviding: NSObjectProtocol {
    // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationpresentationcontextproviding/presentationanchor(for:)
    func presentationAnchor(for session: ASWebAuthenticationSession) -> ASPresentationAnchor
}

// https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsessionerror-swift.struct/errordomain
public let ASWebAuthenticationSessionErrorDomain = "com.apple.AuthenticationServices.WebAuthenticationSession"

// https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsessionerror-swift.struct
public struct ASWebAuthenticationSessionError: Error, Sendable {
    // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsessionerror-swift.struct/code
    public enum Code: Int, Sendable {
        case canceledLogin = 1
        case presentationContextNotProvided = 2
        case presentationContextInvalid = 3
    }

    public let code: Code
    public init(_ code: Code) { self.code = code }
    public static var errorDomain: String { ASWebAuthenticationSessionErrorDomain }
}

// The NSError an Objective-C completion handler receives.
extension ASWebAuthenticationSessionError: CustomNSError {
    public var errorCode: Int { code.rawValue }
}

// https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession
// (neither @MainActor nor Sendable in the iOS 18 SDK; Apple asks for it to be started on the main thread)
open class ASWebAuthenticationSession: NSObject {
    // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/completionhandler
    public typealias CompletionHandler = (URL?, (any Error)?) -> Void

    // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/callback
    public final class Callback: NSObject, Sendable {
        /// What the model catches: a scheme, or an https host and path.
        public let scheme: String?
        public let host: String?
        public let path: String?

        init(scheme: String?, host: String?, path: String?) {
            self.scheme = scheme
            self.host = host
            self.path = path
        }

        // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/callback/customscheme(_:)
        @available(iOS 17.4, macOS 14.4, *)
        public static func customScheme(_ customScheme: String) -> Callback { Callback(scheme: customScheme, host: nil, path: nil) }
        // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/callback/https(host:path:)
        @available(iOS 17.4, macOS 14.4, *)
        public static func https(host: String, path: String) -> Callback { Callback(scheme: "https", host: host, path: path) }
    }

    // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/init(url:callbackurlscheme:completionhandler:)
    public init(url URL: URL, callbackURLScheme: String?, completionHandler: @escaping ASWebAuthenticationSession.CompletionHandler) {
        self.url = URL
        self.callback = Callback(scheme: callbackURLScheme, host: nil, path: nil)
        self.completionHandler = completionHandler
    }

    // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/init(url:callback:completionhandler:)
    @available(iOS 17.4, macOS 14.4, *)
    public init(
        url URL: URL, callback: ASWebAuthenticationSession.Callback, completionHandler: @escaping ASWebAuthenticationSession.CompletionHandler
    ) {
        self.url = URL
        self.callback = callback
        self.completionHandler = completionHandler
    }

    // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/prefersephemeralwebbrowsersession
    open var prefersEphemeralWebBrowserSession: Bool = false
    // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/presentationcontextprovider
    open weak var presentationContextProvider: (any ASWebAuthenticationPresentationContextProviding)?

    // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/start()
    open func start() -> Bool {
        guard state == .created else { return false }
        guard presentationContextProvider != nil else {
            finish(nil, ASWebAuthenticationSessionError(.presentationContextNotProvided))
            return false
        }
        state = .started
        ASWebAuthenticationSession.started.append(self)
        return true
    }

    // https://developer.apple.com/documentation/authenticationservices/aswebauthenticationsession/cancel()
    open func cancel() {
        guard state == .started else { return }
        finish(nil, ASWebAuthenticationSessionError(.canceledLogin))
    }

    // MARK: The model's hooks (not Apple API)

    public let url: URL
    public let callback: Callback
    private let completionHandler: CompletionHandler
    enum State { case created, started, finished }
    private var state = State.created

    /// The sessions started since the last call, oldest first (the model's record, not Apple API).
    public static func takeStarted() -> [ASWebAuthenticationSession] { started.take() }

    private static let started = StartedSessions()

    /// Whether `start()` succeeded and the session has not finished.
    public var isRunning: Bool { state == .started }

    /// Ends a started session as the system does: with the URL it caught, or with an error.
    public func complete(callbackURL: URL?, error: (any Error)?) {
        guard state == .started else { return }
        finish(callbackURL, error)
    }

    private func finish(_ url: URL?, _ error: (any Error)?) {
        state = .finished
        completionHandler(url, error)
    }
}

/// The model's record of started sessions. `@unchecked Sendable`: `sessions` is guarded by `lock`.
final class StartedSessions: @unchecked Sendable {
    private let lock = NSLock()
    private var sessions: [ASWebAuthenticationSession] = []
    func append(_ session: ASWebAuthenticationSession) { lock.withLock { sessions.append(session) } }
    func take() -> [ASWebAuthenticationSession] {
        lock.withLock {
            defer { sessions = [] }
            return sessions
        }
    }
}
