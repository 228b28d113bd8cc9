/* SPDX-License-Identifier: MIT */
/* A C++ program built against an installed ringtrace, through ringtrace.hpp: records
 * to argv[1], then checks that the file is closed and holds its events. */
#include <ringtrace.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	{
		ringtrace::Session session(ringtrace::Config().path(argv[1]));
		if (!session)
			return 1;
		std::string runtime = "cxx-copied";
		for (int i = 0; i < 3; i++) {
			RINGTRACE_SCOPE("consumer", "cxx-scope", "i", i, "dt", 0.5 * i);
			ringtrace::Scope copied("consumer", runtime);
			ringtrace::instant("consumer", "cxx-instant");
		}
		if (session.stop() != 0)
			return 1;
	}
	std::ifstream in(argv[1]);
	std::stringstream text;
	text << in.rdbuf();
	const std::string s = text.str();
	for (const char *want :
	     {"\"cxx-scope\"", "\"cxx-copied\"", "\"cxx-instant\"", "\"dt\":", "\"i\":2"})
		if (s.find(want) == std::string::npos) {
			std::fprintf(stderr, "consumer_cxx: %s lacks %s\n", argv[1], want);
			return 1;
		}
	return s.size() >= 2 && s.compare(s.size() - 2, 2, "]\n") == 0 ? 0 : 1;
}
