vcl 4.1;

# Varnish 7 in front of the name-profile service, kept fresh by the service's purges
# (docs/edge-caching.md). Needs the xkey vmod (Debian: apt-get install varnish varnish-modules).
#
#   varnishd -F -a :80 -f /etc/varnish/default.vcl      (and CACHE_PURGE_URLS=http://<this host>:80 for the service)
#
# What an operator edits: the backend's host and port, and the purgers ACL (who may purge).
#
# - Only answers the service marks shareable are kept (`public` with `s-maxage` or `max-age`, not
#   `private`, `no-store` or `no-cache`), for as long as `s-maxage` says; the service purges them
#   by tag on every change (the `xkey` header lists an answer's tags).
# - `PURGE /` with an `xkey` header of space-separated tags, from the purgers ACL, drops every
#   answer carrying one of the tags (the tag `all` is on every answer: a purge of it empties
#   the cache of the service's answers).
# - The owner check, live-update streams, WebSocket upgrades and anything but GET and HEAD pass
#   to the service and are never kept.
# - Varnish's own X-Varnish and Age headers stay in answers; the tags and a cached answer's
#   RateLimit-* headers (another client's budget) do not.
# - Compression: the service compresses (br, gzip); Varnish keeps a br variant apart from the
#   others (Varnish itself handles gzip only, and gunzips for clients that take no gzip).

import xkey;

backend default {
    .host = "127.0.0.1";
    .port = "4000";
    .connect_timeout = 2s;
    .first_byte_timeout = 35s;
    .between_bytes_timeout = 60s;
}

acl purgers {
    "127.0.0.1";
    "::1";
}

sub vcl_recv {
    if (req.method == "PURGE") {
        if (client.ip !~ purgers) {
            return (synth(403, "Forbidden"));
        }
        if (!req.http.xkey) {
            return (synth(400, "PURGE needs an xkey header"));
        }
        set req.http.x-purged = xkey.purge(req.http.xkey);
        return (synth(200, "Purged " + req.http.x-purged));
    }
    if (req.http.Upgrade ~ "(?i)websocket") {
        return (pipe);
    }
    if (req.method != "GET" && req.method != "HEAD") {
        return (pass);
    }
    # Private or per-client answers: the owner check, live-update streams.
    if (req.url ~ "^/api/owner-check" || req.url ~ "^/api/[^/?]+/events" || req.http.Accept ~ "(?i)text/event-stream") {
        return (pass);
    }
    if (req.http.Authorization || req.http.X-Api-Key) {
        return (pass);
    }
    unset req.http.Cookie;
    # Brotli is kept as a variant of its own (hashed below) and asked of the service as such.
    unset req.http.x-encoding;
    if (req.http.Accept-Encoding ~ "(?i)(^|,)\s*br\s*(,|;|$)" && req.http.Accept-Encoding !~ "(?i)(^|,)\s*br\s*;\s*q\s*=\s*0(\.0*)?\s*(,|$)") {
        set req.http.x-encoding = "br";
    }
    return (hash);
}

sub vcl_hash {
    if (req.http.x-encoding) {
        hash_data(req.http.x-encoding);
    }
    # On to the built-in vcl_hash: URL and host.
}

sub vcl_pipe {
    if (req.http.Upgrade) {
        set bereq.http.Upgrade = req.http.Upgrade;
        set bereq.http.Connection = req.http.Connection;
    }
}

sub vcl_backend_fetch {
    if (bereq.http.x-encoding == "br") {
        set bereq.http.Accept-Encoding = "br";
    }
    unset bereq.http.x-encoding;
}

sub vcl_backend_response {
    if (bereq.uncacheable) {
        return (deliver);
    }
    # Streams are never kept, and never buffered.
    if (beresp.http.Content-Type ~ "(?i)text/event-stream") {
        set beresp.do_stream = true;
        set beresp.uncacheable = true;
        set beresp.ttl = 0s;
        return (deliver);
    }
    # Only what the service says a shared cache may keep; the next request after a refusal may be
    # kept again (hit-for-miss, briefly).
    if (!beresp.http.Cache-Control
        || beresp.http.Cache-Control ~ "(?i)(no-store|no-cache|private)"
        || beresp.http.Cache-Control !~ "(?i)(public|s-maxage)") {
        set beresp.uncacheable = true;
        set beresp.ttl = 1s;
        return (deliver);
    }
    # The service purges what changed; no grace period serves an answer past its purge or TTL.
    set beresp.grace = 0s;
    return (deliver);
}

sub vcl_deliver {
    unset resp.http.xkey;
    unset resp.http.Surrogate-Key;
    if (obj.hits > 0) {
        unset resp.http.RateLimit-Limit;
        unset resp.http.RateLimit-Remaining;
        unset resp.http.RateLimit-Reset;
        unset resp.http.RateLimit-Policy;
        unset resp.http.X-Request-Id;
    }
}
