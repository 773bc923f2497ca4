import ArgumentParser

/// The `switchback` command-line tool.
@main
struct SwitchbackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "switchback",
        abstract: "Sign-in through identity providers that hand the user off to an authenticator app.",
        subcommands: [
            DemoCommand.self, LoginCommand.self, EmulatorCommand.self, ServerCommand.self, VerifyIDTokenCommand.self,
            VerifyPresentationCommand.self,
            CheckStatusCommand.self,
        ]
    )
}
