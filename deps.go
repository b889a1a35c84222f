package deps
import (
	_ "sigs.k8s.io/gateway-api/apis/v1"
	_ "github.com/envoyproxy/gateway/api/v1alpha1"
	_ "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	_ "github.com/onsi/ginkgo/v2"
	_ "github.com/onsi/gomega"
	_ "sigs.k8s.io/yaml"
)
