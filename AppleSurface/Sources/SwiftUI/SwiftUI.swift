// A model of the SwiftUI API the guides' snippets and `View.switchbackRouting` use, declared as the iOS 18
// SDK documents it: protocols with their isolation, the result builders, and the modifiers. Nothing here
// renders; modifiers return their view. Each declaration names its page
// (https://developer.apple.com/documentation/swiftui/...).
public import Foundation
public import UIKit

// https://developer.apple.com/documentation/swiftui/view
@MainActor @preconcurrency public protocol View {
    associatedtype Body: View
    @ViewBuilder @MainActor @preconcurrency var body: Self.Body { get }
}

// https://developer.apple.com/documentation/swiftui/scene
@MainActor @preconcurrency public protocol Scene {
    associatedtype Body: Scene
    @SceneBuilder @MainActor @preconcurrency var body: Self.Body { get }
}

// https://developer.apple.com/documentation/swiftui/app
@MainActor @preconcurrency public protocol App {
    associatedtype Body: Scene
    @SceneBuilder @MainActor @preconcurrency var body: Self.Body { get }
    // https://developer.apple.com/documentation/swiftui/app/init()
    @MainActor @preconcurrency init()
}

extension App {
    // https://developer.apple.com/documentation/swiftui/app/main()
    @MainActor @preconcurrency public static func main() {}
}

// https://developer.apple.com/documentation/swift/never (View and Scene conformances)
extension Never: View, Scene {
    public typealias Body = Never
    public var body: Never { return fatalError("Never has no body") }
}

// https://developer.apple.com/documentation/swiftui/viewbuilder
@resultBuilder public struct ViewBuilder {
    // https://developer.apple.com/documentation/swiftui/viewbuilder/buildexpression(_:)
    public static func buildExpression<Content: View>(_ content: Content) -> Content { content }
    // https://developer.apple.com/documentation/swiftui/viewbuilder/buildblock()
    public static func buildBlock() -> EmptyView { EmptyView() }
    // https://developer.apple.com/documentation/swiftui/viewbuilder/buildblock(_:)
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }
    // https://developer.apple.com/documentation/swiftui/viewbuilder/buildblock(_:)-4bdtp
    public static func buildBlock<each Content: View>(_ content: repeat each Content) -> TupleView<(repeat each Content)> {
        TupleView((repeat each content))
    }
}

// https://developer.apple.com/documentation/swiftui/scenebuilder
@resultBuilder public struct SceneBuilder {
    // https://developer.apple.com/documentation/swiftui/scenebuilder/buildblock(_:)
    public static func buildBlock<Content: Scene>(_ content: Content) -> Content { content }
}

// https://developer.apple.com/documentation/swiftui/emptyview
public struct EmptyView: View {
    nonisolated public init() {}
    public var body: Never { fatalError("a primitive view") }
}

// https://developer.apple.com/documentation/swiftui/tupleview
public struct TupleView<T>: View {
    nonisolated public init(_ value: T) { _ = value }
    public var body: Never { fatalError("a primitive view") }
}

// https://developer.apple.com/documentation/swiftui/windowgroup
public struct WindowGroup<Content: View>: Scene {
    // https://developer.apple.com/documentation/swiftui/windowgroup/init(content:)
    nonisolated public init(@ViewBuilder content: () -> Content) { _ = content() }
    // https://developer.apple.com/documentation/swiftui/windowgroup/init(makecontent:)
    nonisolated public init(@ViewBuilder makeContent: @escaping () -> Content) { _ = makeContent() }
    public var body: Never { fatalError("a primitive scene") }
}

// https://developer.apple.com/documentation/swiftui/text
public struct Text: View {
    // https://developer.apple.com/documentation/swiftui/text/init(_:)-9d1g4
    nonisolated public init<S: StringProtocol>(_ content: S) {}
    public var body: Never { fatalError("a primitive view") }
}

// https://developer.apple.com/documentation/swiftui/button
public struct Button<Label: View>: View {
    // https://developer.apple.com/documentation/swiftui/button/init(_:action:)-lpm7
    @preconcurrency nonisolated public init<S: StringProtocol>(_ title: S, action: @escaping @MainActor () -> Void) where Label == Text {}
    public var body: Never { fatalError("a primitive view") }
}

// https://developer.apple.com/documentation/swiftui/vstack
public struct VStack<Content: View>: View {
    // https://developer.apple.com/documentation/swiftui/vstack/init(alignment:spacing:content:)
    // (alignment and spacing are left out: the snippets use neither)
    nonisolated public init(@ViewBuilder content: () -> Content) { _ = content() }
    public var body: Never { fatalError("a primitive view") }
}

// https://developer.apple.com/documentation/swiftui/dynamicproperty
public protocol DynamicProperty {}

// https://developer.apple.com/documentation/swiftui/state
@propertyWrapper public struct State<Value>: DynamicProperty {
    private let box: StateBox<Value>
    // https://developer.apple.com/documentation/swiftui/state/init(wrappedvalue:)
    public init(wrappedValue value: Value) { box = StateBox(value) }
    // https://developer.apple.com/documentation/swiftui/state/init()
    public init<Wrapped>() where Value == Wrapped? { box = StateBox(nil) }
    // https://developer.apple.com/documentation/swiftui/state/wrappedvalue
    public var wrappedValue: Value {
        get { box.value }
        nonmutating set { box.value = newValue }
    }
}

// https://developer.apple.com/documentation/swiftui/state (Sendable when its value is)
extension State: Sendable where Value: Sendable {}

final class StateBox<Value>: @unchecked Sendable {  // @unchecked: the model's storage, touched on the main actor only.
    var value: Value
    init(_ value: Value) { self.value = value }
}

extension View {
    // https://developer.apple.com/documentation/swiftui/view/onopenurl(perform:)
    nonisolated public func onOpenURL(perform action: @escaping (URL) -> Void) -> some View { self }
    // https://developer.apple.com/documentation/swiftui/view/oncontinueuseractivity(_:perform:)
    nonisolated public func onContinueUserActivity(_ activityType: String, perform action: @escaping (NSUserActivity) -> Void) -> some View { self }
    // https://developer.apple.com/documentation/swiftui/view/task(priority:_:)
    nonisolated public func task(priority: TaskPriority = .userInitiated, _ action: @escaping @Sendable () async -> Void) -> some View { self }
}
