from rest_framework.pagination import PageNumberPagination


class Pagination(PageNumberPagination):
    page_size_query_param = "page_size"
    # One page must stay cheap to build and to send; clients walk `next` for more.
    max_page_size = 100
