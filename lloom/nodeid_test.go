package lloom

import "testing"

func TestLocalNodeIDFollowsLLooMsOrder(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  *Config
		env  map[string]string
		want string
	}{
		{"the environment wins over the config", &Config{Cluster: Cluster{NodeID: "config-node"}}, map[string]string{"LLOOM_NODE_ID": "env-node"}, "env-node"},
		{"the config is read when the environment is unset", &Config{Cluster: Cluster{NodeID: "config-node"}}, nil, "config-node"},
		{"a placeholder is expanded", &Config{Cluster: Cluster{NodeID: "${SPARK_ID}"}}, map[string]string{"SPARK_ID": "spark-node-02"}, "spark-node-02"},
		{"an unset placeholder expands to nothing", &Config{Cluster: Cluster{NodeID: "${SPARK_ID}"}}, nil, ""},
		{"placeholders inside text are expanded", &Config{Cluster: Cluster{NodeID: "spark-${N}"}}, map[string]string{"N": "03"}, "spark-03"},
		{"the only configured node is not taken, as in LLooM", &Config{Cluster: Cluster{Nodes: map[string]ClusterNode{"only": {}}}}, nil, ""},
		{"no config leaves the environment", nil, map[string]string{"LLOOM_NODE_ID": "env-node"}, "env-node"},
		{"no config and no environment gives nothing", nil, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.cfg.LocalNodeID(func(k string) string { return tc.env[k] }); got != tc.want {
				t.Errorf("LocalNodeID = %q, want %q", got, tc.want)
			}
		})
	}
}
