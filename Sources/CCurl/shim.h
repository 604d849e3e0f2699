#include <curl/curl.h>

// curl_easy_setopt is variadic, which Swift cannot call: one typed wrapper per kind of value.
static inline CURLcode wb_curl_set_long(CURL *curl, CURLoption option, long value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode wb_curl_set_string(CURL *curl, CURLoption option, const char *value) {
    return curl_easy_setopt(curl, option, value);
}
static inline CURLcode wb_curl_set_pointer(CURL *curl, CURLoption option, void *value) {
    return curl_easy_setopt(curl, option, value);
}
typedef size_t (*wb_curl_read_callback)(char *buffer, size_t size, size_t count, void *userdata);
static inline CURLcode wb_curl_set_read_function(CURL *curl, wb_curl_read_callback callback) {
    return curl_easy_setopt(curl, CURLOPT_READFUNCTION, callback);
}
// curl_easy_getinfo is variadic too: the last reply code of the server.
static inline CURLcode wb_curl_response_code(CURL *curl, long *value) {
    return curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, value);
}
// Header and body callbacks (CURLOPT_HEADERFUNCTION, CURLOPT_WRITEFUNCTION) share read's shape.
static inline CURLcode wb_curl_set_callback(CURL *curl, CURLoption option, wb_curl_read_callback callback) {
    return curl_easy_setopt(curl, option, callback);
}
