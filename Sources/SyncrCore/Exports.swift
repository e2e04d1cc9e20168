import SyncrManifest
import SyncrHTTP
import SyncrArchive
import SyncrDigest
