// Copyright 2016 The Gini Authors. All rights reserved.  Use of this source
// code is governed by a license that can be found in the License file.

package xo

import "github.com/go-air/gini/z"

const (
	CNull z.C = 0
	CInf      = 0xffffffff
)
