// Swift Testing declares a cross-import overlay for UIKit (Testing.swiftcrossimport/UIKit.swiftoverlay),
// which the compiler looks for in any file importing both. On Apple platforms it adds attachments of
// UIKit images; the model has nothing to attach, so this stand-in is empty.
