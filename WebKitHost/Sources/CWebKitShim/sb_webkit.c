#include "sb_webkit.h"
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void sb_sockets_close_on_exec(void) {
    DIR *directory = opendir("/proc/self/fd");
    if (!directory) return;
    int own = dirfd(directory);
    struct dirent *entry;
    char path[64], target[32];
    while ((entry = readdir(directory))) {
        int fd = atoi(entry->d_name);
        if (fd < 3 || fd == own) continue;
        snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
        ssize_t length = readlink(path, target, sizeof target - 1);
        if (length < 7 || strncmp(target, "socket:", 7) != 0) continue;
        int flags = fcntl(fd, F_GETFD);
        if (flags >= 0 && !(flags & FD_CLOEXEC)) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    }
    closedir(directory);
}

static GMainLoop *loop;

int sb_run_main_loop(void) {
    if (!gtk_init_check(NULL, NULL)) return 0;
    loop = g_main_loop_new(NULL, FALSE);
    g_main_loop_run(loop);
    return 1;
}

void sb_quit(void) {
    if (loop) g_main_loop_quit(loop);
}

typedef struct {
    sb_task task;
    void *context;
} sb_invocation;

static gboolean sb_invoke_once(gpointer data) {
    sb_invocation *invocation = data;
    // The engine starts its processes from this thread, as a task's work: none inherits the host's sockets.
    sb_sockets_close_on_exec();
    invocation->task(invocation->context);
    g_free(invocation);
    return G_SOURCE_REMOVE;
}

void sb_invoke(sb_task task, void *context) {
    sb_invocation *invocation = g_new(sb_invocation, 1);
    invocation->task = task;
    invocation->context = context;
    g_idle_add(sb_invoke_once, invocation);
}

typedef struct {
    sb_decide decide;
    sb_failed failed;
    sb_finished finished;
    sb_response response;
    void *context;
    GtkWidget *window;
} sb_view_state;

static gboolean on_decide_policy(WebKitWebView *view, WebKitPolicyDecision *decision, WebKitPolicyDecisionType type, gpointer data) {
    sb_view_state *state = data;
    if (type == WEBKIT_POLICY_DECISION_TYPE_RESPONSE) {
        WebKitResponsePolicyDecision *decision_for_response = WEBKIT_RESPONSE_POLICY_DECISION(decision);
        if (webkit_response_policy_decision_is_main_frame_main_resource(decision_for_response)) {
            WebKitURIResponse *response = webkit_response_policy_decision_get_response(decision_for_response);
            state->response(webkit_uri_response_get_uri(response), (int)webkit_uri_response_get_status_code(response), state->context);
        }
        // The response is reported, never decided on here: the engine's default applies.
        return FALSE;
    }
    if (type != WEBKIT_POLICY_DECISION_TYPE_NAVIGATION_ACTION && type != WEBKIT_POLICY_DECISION_TYPE_NEW_WINDOW_ACTION) return FALSE;
    WebKitNavigationAction *action = webkit_navigation_policy_decision_get_navigation_action(WEBKIT_NAVIGATION_POLICY_DECISION(decision));
    WebKitURIRequest *request = webkit_navigation_action_get_request(action);
    sb_navigation navigation = {
        .uri = webkit_uri_request_get_uri(request),
        .is_redirect = webkit_navigation_action_is_redirect(action),
        .is_user_gesture = webkit_navigation_action_is_user_gesture(action),
        .navigation_type = webkit_navigation_action_get_navigation_type(action),
        .new_window = type == WEBKIT_POLICY_DECISION_TYPE_NEW_WINDOW_ACTION,
    };
    return state->decide(decision, &navigation, state->context) ? TRUE : FALSE;
}

static gboolean on_load_failed(WebKitWebView *view, WebKitLoadEvent event, gchar *uri, GError *error, gpointer data) {
    sb_view_state *state = data;
    state->failed(uri, g_quark_to_string(error->domain), error->code, state->context);
    // No error page: the host decides what the user sees.
    return TRUE;
}

static void on_load_changed(WebKitWebView *view, WebKitLoadEvent event, gpointer data) {
    sb_view_state *state = data;
    if (event == WEBKIT_LOAD_FINISHED) state->finished(webkit_web_view_get_uri(view), state->context);
}

WebKitWebContext *sb_store_new(void) {
    WebKitWebsiteDataManager *data = webkit_website_data_manager_new_ephemeral();
    WebKitWebContext *store = webkit_web_context_new_with_website_data_manager(data);
    g_object_unref(data);
    return store;
}

void sb_store_route(WebKitWebContext *store, const char *proxy_uri, const char *certificate_pem, const char *const *names) {
    WebKitWebsiteDataManager *data = webkit_web_context_get_website_data_manager(store);
    const char *direct[] = {"127.0.0.1", "localhost", "::1", NULL};
    WebKitNetworkProxySettings *settings = webkit_network_proxy_settings_new(proxy_uri, direct);
    webkit_website_data_manager_set_network_proxy_settings(data, WEBKIT_NETWORK_PROXY_MODE_CUSTOM, settings);
    webkit_network_proxy_settings_free(settings);
    GError *error = NULL;
    GTlsCertificate *certificate = g_tls_certificate_new_from_pem(certificate_pem, -1, &error);
    if (!certificate) {
        g_clear_error(&error);
        return;
    }
    for (const char *const *name = names; *name; name++) webkit_web_context_allow_tls_certificate_for_host(store, certificate, *name);
    g_object_unref(certificate);
}

static WebKitCookieManager *sb_cookie_manager(WebKitWebContext *store) {
    return webkit_website_data_manager_get_cookie_manager(webkit_web_context_get_website_data_manager(store));
}

typedef struct {
    void (*done)(int copied, void *context);
    void *context;
    WebKitWebContext *to;
    int persistent_only;
    int pending;
    int copied;
} sb_cookie_copy;

static void sb_cookie_copy_step(sb_cookie_copy *copy) {
    if (--copy->pending > 0) return;
    copy->done(copy->copied, copy->context);
    g_object_unref(copy->to);
    g_free(copy);
}

static void on_cookie_added(GObject *source, GAsyncResult *result, gpointer data) {
    sb_cookie_copy *copy = data;
    if (webkit_cookie_manager_add_cookie_finish(WEBKIT_COOKIE_MANAGER(source), result, NULL)) copy->copied++;
    sb_cookie_copy_step(copy);
}

static void on_all_cookies(GObject *source, GAsyncResult *result, gpointer data) {
    sb_cookie_copy *copy = data;
    GList *cookies = webkit_cookie_manager_get_all_cookies_finish(WEBKIT_COOKIE_MANAGER(source), result, NULL);
    // One step for the listing itself, so that `done` runs once, after the last addition.
    copy->pending = 1;
    for (GList *item = cookies; item; item = item->next) {
        SoupCookie *cookie = item->data;
        if (copy->persistent_only && soup_cookie_get_expires(cookie) == NULL) continue;
        copy->pending++;
        webkit_cookie_manager_add_cookie(sb_cookie_manager(copy->to), cookie, NULL, on_cookie_added, copy);
    }
    g_list_free_full(cookies, (GDestroyNotify)soup_cookie_free);
    sb_cookie_copy_step(copy);
}

void sb_copy_cookies(WebKitWebContext *from, WebKitWebContext *to, int persistent_only, void (*done)(int copied, void *context), void *context) {
    sb_cookie_copy *copy = g_new0(sb_cookie_copy, 1);
    copy->done = done;
    copy->context = context;
    copy->to = g_object_ref(to);
    copy->persistent_only = persistent_only;
    webkit_cookie_manager_get_all_cookies(sb_cookie_manager(from), NULL, on_all_cookies, copy);
}

WebKitWebView *sb_web_view_new(WebKitWebContext *store, const char *user_agent, sb_decide decide, sb_failed failed, sb_finished finished, sb_response response, void *context) {
    WebKitWebView *view = WEBKIT_WEB_VIEW(webkit_web_view_new_with_context(store));
    WebKitSettings *settings = webkit_web_view_get_settings(view);
    webkit_settings_set_enable_javascript(settings, TRUE);
    if (user_agent) webkit_settings_set_user_agent(settings, user_agent);
    sb_view_state *state = g_new0(sb_view_state, 1);
    state->decide = decide;
    state->failed = failed;
    state->finished = finished;
    state->response = response;
    state->context = context;
    state->window = gtk_offscreen_window_new();
    // A phone's screen in points (an iPhone 15), so that pages lay out and photograph as on one.
    gtk_window_set_default_size(GTK_WINDOW(state->window), 393, 852);
    gtk_container_add(GTK_CONTAINER(state->window), GTK_WIDGET(view));
    gtk_widget_show_all(state->window);
    g_object_set_data_full(G_OBJECT(view), "sb-state", state, g_free);
    g_signal_connect(view, "decide-policy", G_CALLBACK(on_decide_policy), state);
    g_signal_connect(view, "load-failed", G_CALLBACK(on_load_failed), state);
    g_signal_connect(view, "load-changed", G_CALLBACK(on_load_changed), state);
    return view;
}

void sb_web_view_destroy(WebKitWebView *view) {
    sb_view_state *state = g_object_get_data(G_OBJECT(view), "sb-state");
    webkit_web_view_stop_loading(view);
    g_signal_handlers_disconnect_by_data(view, state);
    if (state && state->window) gtk_widget_destroy(state->window);
}

void sb_decision_use(WebKitPolicyDecision *decision) {
    webkit_policy_decision_use(decision);
    g_object_unref(decision);
}

void sb_decision_ignore(WebKitPolicyDecision *decision) {
    webkit_policy_decision_ignore(decision);
    g_object_unref(decision);
}

typedef struct {
    void (*done)(const char *header, void *context);
    void *context;
} sb_cookie_request;

static void on_cookies(GObject *source, GAsyncResult *result, gpointer data) {
    sb_cookie_request *request = data;
    GList *cookies = webkit_cookie_manager_get_cookies_finish(WEBKIT_COOKIE_MANAGER(source), result, NULL);
    GString *header = g_string_new("");
    for (GList *item = cookies; item; item = item->next) {
        SoupCookie *cookie = item->data;
        if (header->len) g_string_append(header, "; ");
        g_string_append_printf(header, "%s=%s", soup_cookie_get_name(cookie), soup_cookie_get_value(cookie));
    }
    g_list_free_full(cookies, (GDestroyNotify)soup_cookie_free);
    request->done(header->str, request->context);
    g_string_free(header, TRUE);
    g_free(request);
}

void sb_cookies(WebKitWebView *view, const char *uri, void (*done)(const char *header, void *context), void *context) {
    WebKitWebsiteDataManager *data = webkit_web_view_get_website_data_manager(view);
    WebKitCookieManager *manager = webkit_website_data_manager_get_cookie_manager(data);
    sb_cookie_request *request = g_new(sb_cookie_request, 1);
    request->done = done;
    request->context = context;
    webkit_cookie_manager_get_cookies(manager, uri, NULL, on_cookies, request);
}

typedef struct {
    void (*done)(const char *text, void *context);
    void *context;
} sb_text_request;

static void on_text(GObject *source, GAsyncResult *result, gpointer data) {
    sb_text_request *request = data;
    JSCValue *value = webkit_web_view_evaluate_javascript_finish(WEBKIT_WEB_VIEW(source), result, NULL);
    char *text = value && jsc_value_is_string(value) ? jsc_value_to_string(value) : NULL;
    request->done(text ? text : "", request->context);
    g_free(text);
    if (value) g_object_unref(value);
    g_free(request);
}

void sb_evaluate(WebKitWebView *view, const char *script, void (*done)(const char *text, void *context), void *context) {
    sb_text_request *request = g_new(sb_text_request, 1);
    request->done = done;
    request->context = context;
    webkit_web_view_evaluate_javascript(view, script, -1, "switchback-test", NULL, NULL, on_text, request);
}

typedef struct {
    void (*done)(int written, void *context);
    void *context;
    char *path;
} sb_snapshot_request;

static void on_snapshot(GObject *source, GAsyncResult *result, gpointer data) {
    sb_snapshot_request *request = data;
    cairo_surface_t *surface = webkit_web_view_get_snapshot_finish(WEBKIT_WEB_VIEW(source), result, NULL);
    int written = surface && cairo_surface_write_to_png(surface, request->path) == CAIRO_STATUS_SUCCESS;
    if (surface) cairo_surface_destroy(surface);
    request->done(written, request->context);
    g_free(request->path);
    g_free(request);
}

void sb_snapshot(WebKitWebView *view, const char *path, void (*done)(int written, void *context), void *context) {
    sb_snapshot_request *request = g_new(sb_snapshot_request, 1);
    request->done = done;
    request->context = context;
    request->path = g_strdup(path);
    webkit_web_view_get_snapshot(view, WEBKIT_SNAPSHOT_REGION_VISIBLE, WEBKIT_SNAPSHOT_OPTIONS_NONE, NULL, on_snapshot, request);
}

/// One press or release of the primary button at (x, y) in the view, from the default seat's pointer.
static void sb_send_button(GtkWidget *widget, GdkWindow *window, GdkEventType type, double x, double y) {
    GdkEvent *event = gdk_event_new(type);
    event->button.window = g_object_ref(window);
    event->button.send_event = FALSE;
    event->button.time = GDK_CURRENT_TIME;
    event->button.x = x;
    event->button.y = y;
    event->button.x_root = x;
    event->button.y_root = y;
    event->button.button = 1;
    event->button.state = type == GDK_BUTTON_RELEASE ? GDK_BUTTON1_MASK : 0;
    GdkSeat *seat = gdk_display_get_default_seat(gdk_window_get_display(window));
    if (seat) gdk_event_set_device(event, gdk_seat_get_pointer(seat));
    gtk_widget_event(widget, event);
    gdk_event_free(event);
}

void sb_click(WebKitWebView *view, double x, double y) {
    GtkWidget *widget = GTK_WIDGET(view);
    GdkWindow *window = gtk_widget_get_window(widget);
    if (!window) return;
    sb_send_button(widget, window, GDK_BUTTON_PRESS, x, y);
    sb_send_button(widget, window, GDK_BUTTON_RELEASE, x, y);
}
