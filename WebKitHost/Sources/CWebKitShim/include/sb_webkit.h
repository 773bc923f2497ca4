// A thin layer between Swift and WebKitGTK: GObject signals take variadic C callbacks and the type
// casts are macros, neither of which Swift can use directly. Everything here runs on the thread that
// runs the GLib main loop.
#ifndef SB_WEBKIT_H
#define SB_WEBKIT_H

#include <webkit2/webkit2.h>

typedef void (*sb_task)(void *context);

/// Initialises GTK and runs the default main loop on the calling thread; returns when sb_quit is called.
int sb_run_main_loop(void);
void sb_quit(void);
/// Runs `task(context)` on the main loop's thread, after sb_sockets_close_on_exec.
void sb_invoke(sb_task task, void *context);
/// Marks every socket of the process close-on-exec. WebKitGTK starts its web and network processes
/// inheriting every descriptor not so marked, and SwiftNIO on Linux accepts and creates sockets without
/// the flag: a loopback server's connection inherited by a WebKit process is not closed when the server
/// closes it (no FIN while that process lives). Any thread may call it.
void sb_sockets_close_on_exec(void);

/// What decide-policy reports for a navigation or new-window action.
typedef struct {
    const char *uri;
    int is_redirect;
    int is_user_gesture;
    int navigation_type;
    int new_window;
} sb_navigation;

/// Called for navigation and new-window decisions; return 1 when the decision was taken (kept with
/// g_object_ref to answer later), 0 for the engine's default.
typedef int (*sb_decide)(WebKitPolicyDecision *decision, const sb_navigation *navigation, void *context);
/// Called when a load fails: the failing URI, the error's domain and code.
typedef void (*sb_failed)(const char *uri, const char *domain, int code, void *context);
/// Called when a main-frame load has finished.
typedef void (*sb_finished)(const char *uri, void *context);
/// Called with the response to a main-frame navigation: its URI and HTTP status.
typedef void (*sb_response)(const char *uri, int status, void *context);

/// A website data store: a web context with its own data manager, kept in memory for this process (each
/// stands in for one of iOS's cookie stores: Safari's, an app's Safari views', an app's WebViews', an
/// authentication session's). Release with g_object_unref.
WebKitWebContext *sb_store_new(void);
/// Sends the store's requests to hosts other than loopback through the HTTP proxy at `proxy_uri`, and
/// accepts the PEM certificate for each of `names` (NULL-terminated), and for nothing else.
void sb_store_route(WebKitWebContext *store, const char *proxy_uri, const char *certificate_pem, const char *const *names);
/// Copies the cookies `from` holds into `to` (only those with an expiry when `persistent_only`), then calls
/// `done` with how many were copied.
void sb_copy_cookies(WebKitWebContext *from, WebKitWebContext *to, int persistent_only, void (*done)(int copied, void *context), void *context);

/// A WebView on `store` in an offscreen window, with the given user agent, JavaScript on, and the
/// callbacks connected.
WebKitWebView *sb_web_view_new(WebKitWebContext *store, const char *user_agent, sb_decide decide, sb_failed failed, sb_finished finished, sb_response response, void *context);
void sb_web_view_destroy(WebKitWebView *view);
void sb_decision_use(WebKitPolicyDecision *decision);
void sb_decision_ignore(WebKitPolicyDecision *decision);
/// The cookies the view's data manager holds for `uri`, as `name=value; …`, through `done` (async in WebKit).
void sb_cookies(WebKitWebView *view, const char *uri, void (*done)(const char *header, void *context), void *context);

/// Evaluates `script` in an isolated world (the page's own scripts cannot see it) and passes its string
/// result to `done`. For tests playing the user: reading the page, tapping a link.
void sb_evaluate(WebKitWebView *view, const char *script, void (*done)(const char *text, void *context), void *context);

/// A press and release of the primary mouse button at (x, y) in the view's coordinates, delivered to the
/// view as input events (the path a person's tap takes), not as a script.
void sb_click(WebKitWebView *view, double x, double y);

/// Writes a PNG of the view's visible part to `path`, then calls `done` with 1 when it was written.
void sb_snapshot(WebKitWebView *view, const char *path, void (*done)(int written, void *context), void *context);

#endif
