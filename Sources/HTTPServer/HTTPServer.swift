// Filled in by the HTTPServer work.
import CMicroHTTPD
