import Foundation
import Testing

/// The provider guides' code is real: every Swift block in the Apple module's DocC articles is part of a
/// file that is compiled and run against the emulator (Tools/Examples/Guides, Tools/Examples/GettingStarted) or
/// parse-checked (Examples/AppleSnippets) by scripts/test.sh.
@Suite("Guides: every code block is real code")
struct GuideSnippetTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// Lines without their indentation, blank lines dropped: a block may be shown at another indentation.
    static func normalized(_ text: String) -> [String] {
        text.split(separator: "\n", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    static func swiftBlocks(in markdown: String) -> [String] {
        var blocks: [String] = []
        var current: [Substring]?
        for line in markdown.split(separator: "\n", omittingEmptySubsequences: false) {
            if current == nil, line.trimmingCharacters(in: .whitespaces) == "```swift" {
                current = []
            } else if current != nil, line.trimmingCharacters(in: .whitespaces) == "```" {
                blocks.append(current!.joined(separator: "\n"))
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    static func files(in folder: String, extension ext: String) throws -> [URL] {
        let directory = root.appendingPathComponent(folder)
        return try FileManager.default.contentsOfDirectory(at: directory, includingPropertiesForKeys: nil).filter { $0.pathExtension == ext }.sorted {
            $0.path < $1.path
        }
    }

    @Test("each Swift block of each guide appears, line for line, in an example that runs or parses")
    func blocksAreReal() throws {
        let sources = try ["Tools/Examples/Guides", "Tools/Examples/GettingStarted", "Examples/AppleSnippets"].flatMap {
            try Self.files(in: $0, extension: "swift")
        }
        let code = try sources.map { Self.normalized(try String(contentsOf: $0, encoding: .utf8)) }
        let guides = try Self.files(in: "Sources/SwitchbackApple/Documentation.docc", extension: "md")
        #expect(guides.count >= 4, "the catalog and its guides are found")
        var checked = 0
        for guide in guides {
            for block in Self.swiftBlocks(in: try String(contentsOf: guide, encoding: .utf8)) {
                let lines = Self.normalized(block)
                let found = code.contains { file in
                    file.indices.contains { start in start + lines.count <= file.count && Array(file[start..<start + lines.count]) == lines }
                }
                #expect(found, "\(guide.lastPathComponent): a block starting \"\(lines.first ?? "")\" is in no example")
                checked += 1
            }
        }
        #expect(checked >= 8, "blocks checked: \(checked)")
    }

    @Test("each Swift block of the README but the package manifest's appears, line for line, in the getting-started example or its Apple wiring")
    func readmeBlocksAreReal() throws {
        let sources =
            try Self.files(in: "Tools/Examples/GettingStarted", extension: "swift") + [
                Self.root.appendingPathComponent("Examples/AppleSnippets/GettingStartedApp.swift")
            ]
        let code = try sources.map { Self.normalized(try String(contentsOf: $0, encoding: .utf8)) }
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        let blocks = Self.swiftBlocks(in: readme).map(Self.normalized).filter { $0.first?.hasPrefix("// Package.swift") != true }
        #expect(blocks.count >= 3, "the README's app code is found")
        for lines in blocks {
            let found = code.contains { file in
                file.indices.contains { start in start + lines.count <= file.count && Array(file[start..<start + lines.count]) == lines }
            }
            #expect(found, "README.md: a block starting \"\(lines.first ?? "")\" is in no example")
        }
    }

    @Test("the check notices a block that is in no example")
    func noticesStrayBlock() {
        let block = Self.swiftBlocks(in: "text\n```swift\nlet x = 1\n  let y = 2\n```\n")
        #expect(block.map(Self.normalized) == [["let x = 1", "let y = 2"]])
        let file = Self.normalized("let x = 1\nlet z = 3\nlet y = 2\n")
        let lines = Self.normalized(block[0])
        #expect(!file.indices.contains { start in start + lines.count <= file.count && Array(file[start..<start + lines.count]) == lines })
    }
}
