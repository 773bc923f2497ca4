// A model of the SafariServices API the adapters use, declared as the iOS 18 SDK documents it. Each
// declaration names its page (https://developer.apple.com/documentation/safariservices/...).
public import Foundation
public import UIKit

// https://developer.apple.com/documentation/safariservices/sfsafariviewcontrollerdelegate
public protocol SFSafariViewControllerDelegate: NSObjectProtocol {
    // https://developer.apple.com/documentation/safariservices/sfsafariviewcontrollerdelegate/safariviewcontrollerdidfinish(_:)
    func safariViewControllerDidFinish(_ controller: SFSafariViewController)
}

// https://developer.apple.com/documentation/safariservices/sfsafariviewcontroller
@MainActor open class SFSafariViewController: UIViewController {
    // https://developer.apple.com/documentation/safariservices/sfsafariviewcontroller/dismissbuttonstyle-swift.enum
    public enum DismissButtonStyle: Int, Sendable {
        case done = 0
        case close = 1
        case cancel = 2
    }

    // https://developer.apple.com/documentation/safariservices/sfsafariviewcontroller/init(url:)
    public init(url URL: URL) {
        self.url = URL
        super.init(nibName: nil, bundle: nil)
    }

    public required init?(coder: NSCoder) { nil }

    // https://developer.apple.com/documentation/safariservices/sfsafariviewcontroller/delegate
    open weak var delegate: (any SFSafariViewControllerDelegate)?
    // https://developer.apple.com/documentation/safariservices/sfsafariviewcontroller/dismissbuttonstyle-swift.property
    open var dismissButtonStyle: SFSafariViewController.DismissButtonStyle = .done

    /// The model's record of the URL it was made for (not Apple API).
    public let url: URL
}
