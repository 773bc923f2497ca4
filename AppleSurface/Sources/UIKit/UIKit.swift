// A model of the UIKit API that Sources/SwitchbackApple and Examples/AppleSnippets use, declared as the
// iOS 18 SDK documents it (labels, optionality, isolation), so that Linux can type-check them. Types only:
// nothing here runs a user interface. Each declaration names the page it was taken from
// (https://developer.apple.com/documentation/uikit/...).
// UIKit re-exports Foundation, as on iOS.
@_exported public import Foundation

// https://developer.apple.com/documentation/uikit/uiresponder
@MainActor open class UIResponder: NSObject {
    public override init() {}
}

// https://developer.apple.com/documentation/uikit/uiview
@MainActor open class UIView: UIResponder {
    // https://developer.apple.com/documentation/uikit/uiview/init(frame:)
    public init(frame: CGRect) {}
    // https://developer.apple.com/documentation/objectivec/nsobject/init() (UIView's is init(frame: .zero))
    public override convenience init() { self.init(frame: .zero) }
}

// https://developer.apple.com/documentation/uikit/uiwindow
@MainActor open class UIWindow: UIView {
    // https://developer.apple.com/documentation/uikit/uiwindow/rootviewcontroller
    open var rootViewController: UIViewController?
}

// https://developer.apple.com/documentation/uikit/uiviewcontroller
@MainActor open class UIViewController: UIResponder {
    // https://developer.apple.com/documentation/uikit/uiviewcontroller/init(nibname:bundle:)
    public init(nibName nibNameOrNil: String?, bundle nibBundleOrNil: Bundle?) {}
    // https://developer.apple.com/documentation/uikit/uiviewcontroller/init(coder:)
    public required init?(coder: NSCoder) {}
    // https://developer.apple.com/documentation/uikit/uiviewcontroller/view
    open var view: UIView!
    // https://developer.apple.com/documentation/uikit/uiviewcontroller/loadview()
    open func loadView() {}
    // https://developer.apple.com/documentation/uikit/uiviewcontroller/loadviewifneeded()
    open func loadViewIfNeeded() { if view == nil { loadView() } }
    // https://developer.apple.com/documentation/uikit/uiviewcontroller/navigationitem
    open var navigationItem: UINavigationItem { storedNavigationItem }
    private let storedNavigationItem = UINavigationItem()
    // https://developer.apple.com/documentation/uikit/uiviewcontroller/navigationcontroller
    open var navigationController: UINavigationController? { parentNavigation }
    weak var parentNavigation: UINavigationController?
    // https://developer.apple.com/documentation/uikit/uiviewcontroller/presentedviewcontroller
    open var presentedViewController: UIViewController? { presented }
    private var presented: UIViewController?
    private weak var presenter: UIViewController?
    // https://developer.apple.com/documentation/uikit/uiviewcontroller/present(_:animated:completion:)
    // (the model records the presentation and completes at once)
    open func present(_ viewControllerToPresent: UIViewController, animated flag: Bool, completion: (() -> Void)? = nil) {
        presented = viewControllerToPresent
        viewControllerToPresent.presenter = self
        completion?()
    }
    // https://developer.apple.com/documentation/uikit/uiviewcontroller/dismiss(animated:completion:)
    // (as UIKit: sent to a presented controller, it asks its presenter to dismiss it)
    open func dismiss(animated flag: Bool, completion: (() -> Void)? = nil) {
        if let presented {
            presented.presenter = nil
            self.presented = nil
        } else if let presenter {
            presenter.dismiss(animated: flag)
        }
        completion?()
    }
}

// https://developer.apple.com/documentation/uikit/uinavigationcontroller
@MainActor open class UINavigationController: UIViewController {
    // https://developer.apple.com/documentation/uikit/uinavigationcontroller/init(rootviewcontroller:)
    public init(rootViewController: UIViewController) {
        viewControllers = [rootViewController]
        super.init(nibName: nil, bundle: nil)
        rootViewController.parentNavigation = self
    }
    public required init?(coder: NSCoder) {
        viewControllers = []
        super.init(coder: coder)
    }
    // https://developer.apple.com/documentation/uikit/uinavigationcontroller/viewcontrollers
    open var viewControllers: [UIViewController]
}

// https://developer.apple.com/documentation/uikit/uinavigationitem
@MainActor open class UINavigationItem: NSObject {
    // https://developer.apple.com/documentation/uikit/uinavigationitem/leftbarbuttonitem
    open var leftBarButtonItem: UIBarButtonItem?
    // https://developer.apple.com/documentation/uikit/uinavigationitem/rightbarbuttonitem
    open var rightBarButtonItem: UIBarButtonItem?
}

// https://developer.apple.com/documentation/uikit/uibarbuttonitem
@MainActor open class UIBarButtonItem: NSObject {
    // https://developer.apple.com/documentation/uikit/uibarbuttonitem/systemitem
    public enum SystemItem: Int, Sendable {
        case done, cancel, edit, save, add
    }

    // https://developer.apple.com/documentation/uikit/uibarbuttonitem/init(systemitem:primaryaction:menu:)
    @MainActor @preconcurrency public convenience init(systemItem: UIBarButtonItem.SystemItem, primaryAction: UIAction? = nil, menu: UIMenu? = nil) {
        self.init()
        self.primaryAction = primaryAction
    }
    // https://developer.apple.com/documentation/uikit/uibarbuttonitem/primaryaction
    open var primaryAction: UIAction?
    // https://developer.apple.com/documentation/uikit/uibarbuttonitem/init(customview:)
    public convenience init(customView: UIView) { self.init() }
    public override init() {}
}

// https://developer.apple.com/documentation/uikit/uimenu
@MainActor open class UIMenu: NSObject {}

// https://developer.apple.com/documentation/uikit/uiactionhandler
public typealias UIActionHandler = (UIAction) -> Void

// https://developer.apple.com/documentation/uikit/uiaction
@MainActor open class UIAction: NSObject {
    let handler: UIActionHandler
    // https://developer.apple.com/documentation/uikit/uiaction/init(title:image:identifier:discoverabilitytitle:attributes:state:handler:)
    // (title, image, identifier, discoverabilityTitle, attributes and state are left out: the adapters use none)
    @MainActor @preconcurrency public init(handler: @escaping UIActionHandler) { self.handler = handler }

    /// Performs the action as a tap does (the model's hook, not Apple API).
    public func perform() { handler(self) }
}

// https://developer.apple.com/documentation/uikit/uiactivityindicatorview
@MainActor open class UIActivityIndicatorView: UIView {
    // https://developer.apple.com/documentation/uikit/uiactivityindicatorview/style-swift.enum
    public enum Style: Int, Sendable {
        case medium = 100
        case large = 101
    }

    // https://developer.apple.com/documentation/uikit/uiactivityindicatorview/init(style:)
    public init(style: UIActivityIndicatorView.Style) { super.init(frame: .zero) }
    // https://developer.apple.com/documentation/uikit/uiactivityindicatorview/hideswhenstopped
    open var hidesWhenStopped: Bool = true
    // https://developer.apple.com/documentation/uikit/uiactivityindicatorview/startanimating()
    open func startAnimating() {}
    // https://developer.apple.com/documentation/uikit/uiactivityindicatorview/stopanimating()
    open func stopAnimating() {}
}

// https://developer.apple.com/documentation/uikit/uiapplication
@MainActor open class UIApplication: UIResponder {
    // https://developer.apple.com/documentation/uikit/uiapplication/shared
    public static let shared = UIApplication()
    // https://developer.apple.com/documentation/uikit/uiapplication/connectedscenes
    open var connectedScenes: Set<UIScene> { [] }
    // https://developer.apple.com/documentation/uikit/uiapplication/openexternalurloptionskey
    public struct OpenExternalURLOptionsKey: Hashable, RawRepresentable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        // https://developer.apple.com/documentation/uikit/uiapplication/openexternalurloptionskey/universallinksonly
        public static let universalLinksOnly = OpenExternalURLOptionsKey(rawValue: "UIApplicationOpenURLOptionUniversalLinksOnly")
    }
    // https://developer.apple.com/documentation/uikit/uiapplication/open(_:options:completionhandler:)
    // (the async form Swift generates from the completion-handler method, which UIApplication.h does not disable)
    open func open(_ url: URL, options: [UIApplication.OpenExternalURLOptionsKey: Any] = [:]) async -> Bool { false }
    // https://developer.apple.com/documentation/uikit/uiapplication/beginbackgroundtask(withname:expirationhandler:)
    nonisolated open func beginBackgroundTask(withName taskName: String?, expirationHandler handler: (@MainActor @Sendable () -> Void)? = nil)
        -> UIBackgroundTaskIdentifier
    {
        UIApplication.backgroundTasksInModel.withLock { $0.begin(taskName) }
    }
    // https://developer.apple.com/documentation/uikit/uiapplication/endbackgroundtask(_:)
    nonisolated open func endBackgroundTask(_ identifier: UIBackgroundTaskIdentifier) {
        UIApplication.backgroundTasksInModel.withLock { $0.end(identifier) }
    }
    /// Not Apple API: the model's record of background tasks begun and ended.
    public nonisolated static let backgroundTasksInModel = ModelLock(BackgroundTaskRecord())
    // https://developer.apple.com/documentation/uikit/uiapplication/isprotecteddataavailable
    // (the model's answer is `UIApplication.protectedDataAvailableInModel`, which tests set)
    open var isProtectedDataAvailable: Bool { UIApplication.protectedDataAvailableInModel }
    /// Not Apple API: what the model's `isProtectedDataAvailable` answers.
    public static var protectedDataAvailableInModel = true
    // https://developer.apple.com/documentation/uikit/uiapplication/protecteddatadidbecomeavailablenotification
    public nonisolated static let protectedDataDidBecomeAvailableNotification = Notification.Name("UIApplicationProtectedDataDidBecomeAvailable")
    // https://developer.apple.com/documentation/uikit/uiapplication/didbecomeactivenotification
    public nonisolated static let didBecomeActiveNotification = Notification.Name("UIApplicationDidBecomeActiveNotification")
    // https://developer.apple.com/documentation/uikit/uiapplication/didenterbackgroundnotification
    public nonisolated static let didEnterBackgroundNotification = Notification.Name("UIApplicationDidEnterBackgroundNotification")
}

// https://developer.apple.com/documentation/uikit/uibackgroundtaskidentifier
public struct UIBackgroundTaskIdentifier: Hashable, Sendable, RawRepresentable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }
    // https://developer.apple.com/documentation/uikit/uibackgroundtaskidentifier/invalid
    public static let invalid = UIBackgroundTaskIdentifier(rawValue: 0)
}

/// Not Apple API: what the model's UIApplication records about background tasks.
public struct BackgroundTaskRecord: Sendable {
    public private(set) var begun: [String?] = []
    public private(set) var open: Set<Int> = []
    private var next = 1

    mutating func begin(_ name: String?) -> UIBackgroundTaskIdentifier {
        begun.append(name)
        defer { next += 1 }
        open.insert(next)
        return UIBackgroundTaskIdentifier(rawValue: next)
    }

    mutating func end(_ identifier: UIBackgroundTaskIdentifier) { open.remove(identifier.rawValue) }
}

/// Not Apple API: a lock around a value, for the model's records.
public final class ModelLock<Value: Sendable>: @unchecked Sendable {  // @unchecked: `value` is guarded by `lock`.
    private let lock = NSLock()
    private var value: Value
    public init(_ value: Value) { self.value = value }
    public func withLock<T>(_ body: (inout Value) -> T) -> T { lock.withLock { body(&value) } }
}

// https://developer.apple.com/documentation/uikit/uiscene
@MainActor open class UIScene: UIResponder {
    // https://developer.apple.com/documentation/uikit/uiscene/connectionoptions
    @MainActor open class ConnectionOptions: NSObject {
        // https://developer.apple.com/documentation/uikit/uiscene/connectionoptions/useractivities
        open var userActivities: Set<NSUserActivity> { [] }
    }
}

// https://developer.apple.com/documentation/uikit/uiwindowscene
@MainActor open class UIWindowScene: UIScene {
    // https://developer.apple.com/documentation/uikit/uiwindowscene/keywindow
    open var keyWindow: UIWindow? { nil }
}

// https://developer.apple.com/documentation/uikit/uiscenesession
@MainActor open class UISceneSession: NSObject {}

// https://developer.apple.com/documentation/uikit/uiopenurlcontext
@MainActor open class UIOpenURLContext: NSObject {
    // https://developer.apple.com/documentation/uikit/uiopenurlcontext/url
    open var url: URL { URL(fileURLWithPath: "/") }
}

// https://developer.apple.com/documentation/uikit/uiscenedelegate
@MainActor public protocol UISceneDelegate: NSObjectProtocol {
    // https://developer.apple.com/documentation/uikit/uiscenedelegate/scene(_:willconnectto:options:)
    func scene(_ scene: UIScene, willConnectTo session: UISceneSession, options connectionOptions: UIScene.ConnectionOptions)
    // https://developer.apple.com/documentation/uikit/uiscenedelegate/scene(_:continue:)
    func scene(_ scene: UIScene, continue userActivity: NSUserActivity)
    // https://developer.apple.com/documentation/uikit/uiscenedelegate/scene(_:openurlcontexts:)
    func scene(_ scene: UIScene, openURLContexts URLContexts: Set<UIOpenURLContext>)
}

// Optional requirements in Objective-C: default implementations stand for "not implemented".
extension UISceneDelegate {
    public func scene(_ scene: UIScene, willConnectTo session: UISceneSession, options connectionOptions: UIScene.ConnectionOptions) {}
    public func scene(_ scene: UIScene, continue userActivity: NSUserActivity) {}
    public func scene(_ scene: UIScene, openURLContexts URLContexts: Set<UIOpenURLContext>) {}
}

// https://developer.apple.com/documentation/uikit/uiwindowscenedelegate
@MainActor public protocol UIWindowSceneDelegate: UISceneDelegate {
    // https://developer.apple.com/documentation/uikit/uiwindowscenedelegate/window
    var window: UIWindow? { get set }
}

// Foundation on Apple platforms, absent from swift-corelibs-foundation: declared here so that the
// adapters' `NSUserActivity` code type-checks.
// https://developer.apple.com/documentation/foundation/nsuseractivity
open class NSUserActivity: NSObject, @unchecked Sendable {  // @unchecked: set up once by the system before it is handed over.
    // https://developer.apple.com/documentation/foundation/nsuseractivity/init(activitytype:)
    public init(activityType: String) { self.activityType = activityType }
    // https://developer.apple.com/documentation/foundation/nsuseractivity/activitytype
    public let activityType: String
    // https://developer.apple.com/documentation/foundation/nsuseractivity/webpageurl
    open var webpageURL: URL?
}

// https://developer.apple.com/documentation/foundation/nsuseractivitytypebrowsingweb
public let NSUserActivityTypeBrowsingWeb: String = "NSUserActivityTypeBrowsingWeb"
