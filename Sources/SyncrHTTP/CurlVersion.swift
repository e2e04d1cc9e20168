import CCurl
/// The libcurl version string syncr runs with.
public var curlVersion: String { String(cString: curl_version()) }
